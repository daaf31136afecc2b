// GET /admin/metrics: the proxy's state as Prometheus text (format 0.0.4) to alert on: when each certificate ends,
// the HAProxy version in force and how long ago it was applied, the last success and failure of each job kind,
// whether each load balancer runs the version in force, and how many projects, domains and containers there are.
import { and, count, eq, inArray, isNotNull, max } from "drizzle-orm";
import { jobRuns } from "../../jobs/tables";
import { database, type Database } from "../../shared/db";
import { loadBalancerStatuses, type LoadBalancerStatus } from "../haproxy/status";
import { haproxyVersions } from "../haproxy/tables";
import { containers, domains, projects } from "../installation/tables";
import { certificates } from "../pki/tables";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** What the page shows, read at one moment. */
export interface ProxyMetrics {
  now: Date;
  certificates: { name: string; source: string; notAfter: Date }[];
  /** The version in force and when it was applied (its run ended; when it has no run, when it was stored). */
  haproxy?: { version: number; appliedAt: Date };
  /** Every job kind, with when a run of it last succeeded and last failed (undefined: never, or pruned). */
  jobs: { kind: string; lastSuccess?: Date; lastFailure?: Date }[];
  /** The load balancers with an agent to ask. */
  loadBalancers: Pick<LoadBalancerStatus, "role" | "agentUrl" | "state" | "inSync">[];
  counts: { projects: number; domains: number; containers: number };
}

export async function collectMetrics(
  env: Env,
  input: { now: Date; jobKinds: readonly string[] },
): Promise<ProxyMetrics> {
  // The database's part in one round trip, while the agents are asked (they are judged against the version in force
  // it reads once both have answered).
  const reading = readMetricsRows(database(env.DB), input.jobKinds);
  const [[certificateRows, [active], jobRows, [projectCount], [domainCount], [containerCount]], statuses] =
    await Promise.all([
      reading,
      loadBalancerStatuses(
        env,
        input.now,
        reading.then(([, [active]]) => (active ? { version: active.version, digest: active.digest } : null)),
      ),
    ]);
  // max() over a timestamp column comes back as the stored number of milliseconds.
  const lastAt = (kind: string, state: string) => {
    const at = jobRows.find((row) => row.kind === kind && row.state === state)?.at;
    return at === null || at === undefined ? undefined : new Date(Number(at));
  };
  return {
    now: input.now,
    certificates: certificateRows,
    haproxy: active && { version: active.version, appliedAt: active.endedAt ?? active.createdAt },
    jobs: input.jobKinds.map((kind) => ({
      kind,
      lastSuccess: lastAt(kind, "succeeded"),
      lastFailure: lastAt(kind, "failed"),
    })),
    loadBalancers: statuses.filter((status) => status.state !== "not-configured"),
    counts: { projects: projectCount.value, domains: domainCount.value, containers: containerCount.value },
  };
}

/**
 * When each job kind last succeeded and last failed, exposed for tests. (kind, state, ended_at) answers it from the
 * index alone, in group order: without it every scrape read and grouped the whole run history.
 */
export function lastOutcomesQuery(db: Database, jobKinds: readonly string[]) {
  return db
    .select({ kind: jobRuns.kind, state: jobRuns.state, at: max(jobRuns.endedAt) })
    .from(jobRuns)
    .where(
      and(
        inArray(jobRuns.kind, [...jobKinds]),
        inArray(jobRuns.state, ["succeeded", "failed"]),
        isNotNull(jobRuns.endedAt),
      ),
    )
    .groupBy(jobRuns.kind, jobRuns.state);
}

/** The certificates, the version in force, each job kind's last outcomes and the counts, in one batch. */
function readMetricsRows(db: Database, jobKinds: readonly string[]) {
  return db.batch([
    db
      .select({ name: certificates.name, source: certificates.source, notAfter: certificates.notAfter })
      .from(certificates),
    db
      .select({
        version: haproxyVersions.id,
        digest: haproxyVersions.digest,
        createdAt: haproxyVersions.createdAt,
        endedAt: jobRuns.endedAt,
      })
      .from(haproxyVersions)
      .leftJoin(jobRuns, eq(jobRuns.id, haproxyVersions.jobRunId))
      .where(eq(haproxyVersions.status, "active"))
      .limit(1),
    lastOutcomesQuery(db, jobKinds),
    db.select({ value: count() }).from(projects),
    db.select({ value: count() }).from(domains),
    db.select({ value: count() }).from(containers),
  ]);
}

// ---- Prometheus text ----

type Sample = { labels?: Record<string, string>; value: number };
type Family = { name: string; help: string; samples: Sample[] };

const escapeLabelValue = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const seconds = (date: Date) => date.getTime() / 1000;

function formatSample(name: string, sample: Sample): string {
  const labels = Object.entries(sample.labels ?? {})
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([label, value]) => `${label}="${escapeLabelValue(value)}"`);
  return `${name}${labels.length ? `{${labels.join(",")}}` : ""} ${String(sample.value)}`;
}

/** Every family is a gauge; families without a sample are left out. Pure: the same metrics give the same text. */
export function renderMetrics(metrics: ProxyMetrics): string {
  const families: Family[] = [
    ...certificateFamilies(metrics),
    ...haproxyFamilies(metrics),
    ...jobFamilies(metrics),
    ...loadBalancerFamilies(metrics),
    ...countFamilies(metrics),
  ];
  return families
    .filter((family) => family.samples.length > 0)
    .flatMap((family) => [
      `# HELP ${family.name} ${family.help}`,
      `# TYPE ${family.name} gauge`,
      ...family.samples.map((sample) => formatSample(family.name, sample)),
    ])
    .map((line) => `${line}\n`)
    .join("");
}

/** When each certificate ends. */
function certificateFamilies(metrics: ProxyMetrics): Family[] {
  return [
    {
      name: "proxy_certificate_not_after_timestamp_seconds",
      help: "When each stored certificate ends (Unix time).",
      samples: metrics.certificates
        .map((row) => ({ labels: { name: row.name, source: row.source }, value: seconds(row.notAfter) }))
        .sort((a, b) => (a.labels.name < b.labels.name ? -1 : 1)),
    },
  ];
}

/** The HAProxy version in force, and when it was applied. */
function haproxyFamilies(metrics: ProxyMetrics): Family[] {
  return [
    {
      name: "proxy_haproxy_version_in_force",
      help: "The number of the HAProxy version in force (GET /admin/haproxy).",
      samples: metrics.haproxy ? [{ value: metrics.haproxy.version }] : [],
    },
    {
      name: "proxy_haproxy_last_apply_timestamp_seconds",
      help: "When the HAProxy version in force was applied (Unix time).",
      samples: metrics.haproxy ? [{ value: seconds(metrics.haproxy.appliedAt) }] : [],
    },
    {
      name: "proxy_haproxy_seconds_since_last_apply",
      help: "Seconds since the HAProxy version in force was applied.",
      samples: metrics.haproxy ? [{ value: seconds(metrics.now) - seconds(metrics.haproxy.appliedAt) }] : [],
    },
  ];
}

/** Each job kind's last success and failure. */
function jobFamilies(metrics: ProxyMetrics): Family[] {
  return [
    {
      name: "proxy_job_last_success_timestamp_seconds",
      help: "When a run of the job kind last succeeded (Unix time).",
      samples: metrics.jobs.flatMap((job) =>
        job.lastSuccess ? [{ labels: { kind: job.kind }, value: seconds(job.lastSuccess) }] : [],
      ),
    },
    {
      name: "proxy_job_last_failure_timestamp_seconds",
      help: "When a run of the job kind last failed (Unix time).",
      samples: metrics.jobs.flatMap((job) =>
        job.lastFailure ? [{ labels: { kind: job.kind }, value: seconds(job.lastFailure) }] : [],
      ),
    },
  ];
}

/** Each load balancer with an agent: up, and in sync. */
function loadBalancerFamilies(metrics: ProxyMetrics): Family[] {
  return [
    {
      name: "proxy_haproxy_load_balancer_up",
      help: "1 when the load balancer's agent answered GET /v1/status.",
      samples: metrics.loadBalancers.map((lb) => ({
        labels: { role: lb.role, agent: lb.agentUrl ?? "" },
        value: lb.state === "unreachable" ? 0 : 1,
      })),
    },
    {
      name: "proxy_haproxy_load_balancer_in_sync",
      help: "1 when the files on the load balancer's disk are the HAProxy version in force, 0 when they drifted.",
      samples: metrics.loadBalancers.map((lb) => ({
        labels: { role: lb.role, agent: lb.agentUrl ?? "" },
        value: lb.inSync ? 1 : 0,
      })),
    },
  ];
}

/** How much the installation holds. */
function countFamilies(metrics: ProxyMetrics): Family[] {
  return [
    { name: "proxy_projects", help: "Projects.", samples: [{ value: metrics.counts.projects }] },
    { name: "proxy_domains", help: "Domains of every project.", samples: [{ value: metrics.counts.domains }] },
    { name: "proxy_containers", help: "Containers of every project.", samples: [{ value: metrics.counts.containers }] },
  ];
}
