// gensynchaprx's engine: generate the HAProxy bundle from D1, check it, store it as a numbered version, have the
// master's agent validate and apply it, then queue one slave sync per slave agent; and the re-shipping of a stored
// version as a new one (rollback). The slave sync itself is in slave-sync.ts.
import { database, type Database } from "../../shared/db";
import { DomainError } from "../../shared/domain-errors";
import { RunFailed, versionNotFound } from "../domain-errors";
import type { Caller } from "../installation/api-users";
import { loadInstallation } from "../installation/load";
import { ensureFallbackCertificate, listCertificates } from "../pki/certificates";
import { proxySettings, type ProxySettings } from "../settings";
import { AgentError, agentStatus, type AgentResult } from "./agent-client";
import { highestSlaveVersion } from "./agent-syncs";
import {
  bundleDigest,
  generateHaproxyBundle,
  InvalidConfiguration,
  type BundleNote,
  type HaproxySettings,
} from "./config";
import { agentOf, checkedBundle, type Candidate, type Refusal } from "./checked-bundle";
import { masterPushId, pushAndSettle } from "./push-outcome";
import {
  activateVersion,
  bundleOfVersion,
  findVersion,
  markVersionUnknown,
  rejectVersion,
  storeVersion,
} from "./versions";

export { syncSlave } from "./slave-sync";

/**
 * Queues one sync per slave agent (proxy/jobs knows the job): their run ids in order, or, when the queue refused
 * them, the warning that says so (already on the parent run; the minute sweep queues them again).
 */
export type QueueSlaveSyncs = (
  syncs: { version: number; agentUrl: string }[],
) => Promise<{ queued: number[] } | { refused: string }>;

/**
 * Renews the run's job lock; false when its lease ended (another run may hold it and ship a newer version). Asked
 * right before the master's push, so that a run that lost its lock pushes nothing.
 */
export type HoldsLock = () => Promise<boolean>;

/** What a run says of the slave syncs it queued. */
export const queuedNotes = (version: number, slaves: readonly string[], runIds: readonly number[]) =>
  slaves.map(
    (agentUrl, index) => `INFO: sync of version ${version} to slave ${agentUrl} queued as job ${runIds[index]}`,
  );

export const GENSYNC_FAILED = "Unable to reload and sync of HAProxy: ";

/** A failed gensynchaprx (the spec's 500): nothing was applied and the previous configuration stays active. */
export class GenSyncFailed extends DomainError {
  override name = "GenSyncFailed";
  /**
   * @param detail the cause for the administrator and the job history; it may quote the agent (`haproxy -c` output)
   *   or other projects' settings
   * @param summary the cause for every other caller: a fixed phrase, never tool output or data
   * @param outcome what became of the previous configuration, as every caller is told
   */
  constructor(
    detail: string,
    readonly summary: string,
    readonly outcome = "The previous configuration is still active.",
  ) {
    super("failed", `${GENSYNC_FAILED}${detail}`);
  }
}

const NOTHING_PUSHED = "Nothing was pushed to the load balancer.";
const NEWER_STAYS = "The newer version stays active.";

export const AGENT_SUMMARY: Record<AgentError["reason"], string> = {
  refused: "the load balancer refused the configuration",
  unreachable: "the load balancer could not be reached",
  "not-configured": "the load balancer's agent is not configured",
  unknown: "the load balancer did not answer in time and could not tell what it did",
  unchecked: "the load balancer could not check the configuration in time",
};

/** What a caller is told of a version whose push's outcome is unknown. */
export const UNKNOWN_OUTCOME =
  "Whether the load balancer took it is unknown until GET /admin/haproxy/status reads the agent again.";

/**
 * A failed gensynchaprx as the caller reads it, with the run in X-Job-Id. The administrator gets the detail (also in
 * the job history). Any other caller may start the job but must not read what the agent's tools printed (HAProxy
 * quotes expanded configuration text) nor other projects' data, so gets the summary and the run to ask about.
 */
export function genSyncFailureFor(caller: Pick<Caller, "isAdmin">, failure: DomainError, runId: number): RunFailed {
  if (caller.isAdmin) return new RunFailed(failure.kind, failure.message, runId);
  const where = `(job run ${runId}; an administrator can read GET /admin/jobs/${runId})`;
  const message =
    failure instanceof GenSyncFailed
      ? `${GENSYNC_FAILED}${failure.summary} ${where}. ${failure.outcome}`
      : `${GENSYNC_FAILED}internal error ${where}`;
  return new RunFailed("failed", message, runId);
}

export const haproxySettingsOf = (settings: ProxySettings): HaproxySettings => ({
  httpPort: settings.HAPROXY_HTTP_PORT,
  httpsPort: settings.HAPROXY_HTTPS_PORT,
  bindAddress: settings.HAPROXY_BIND_ADDRESS,
  httpsRedirectCode: settings.HAPROXY_HTTPS_REDIRECT_CODE,
  acmeBackendUrl: settings.HAPROXY_ACME_BACKEND_URL,
  paramsExtraDirectives: settings.HAPROXY_PARAMS_EXTRA_DIRECTIVES,
  addressExceptions: settings.PROXY_ADDRESS_EXCEPTIONS,
});

// The global fetch is looked up at call time, so that tests intercepting outbound fetch see the pushes.
const outbound: typeof fetch = (input, init) => fetch(input, init);

// ---- generate and apply ----

export interface AppliedVersion {
  version: number;
  /** The warnings, each with the project it is about (null: the installation as a whole). */
  notes: BundleNote[];
}

/**
 * Stores a refused bundle as a rejected version, for the administrator to read; answers the run's failure. `detail`
 * says why, given the version's number.
 */
async function rejectCandidate(
  db: Database,
  input: { runId: number; now: Date; agentsRun?: number; kept: number },
  refused: Candidate,
  refusal: Refusal,
): Promise<GenSyncFailed> {
  const version = await storeCandidate(db, input, refused);
  const message = refusal.detail(version);
  await rejectVersion(db, version, message);
  const summary = AGENT_SUMMARY[refusal.reason];
  return new GenSyncFailed(`${message.replace(/\.+$/, "")}. The previous configuration is still active.`, summary);
}

const storeCandidate = (
  db: Database,
  input: { runId: number; now: Date; agentsRun?: number; kept: number },
  { bundle, digest }: Candidate,
) =>
  storeVersion(db, {
    kept: input.kept,
    agentsRun: input.agentsRun,
    digest,
    jobRunId: input.runId,
    files: bundle.files,
    certificateFiles: bundle.certificates.map(({ file, row }) => ({ file, name: row.name })),
    problems: bundle.problems,
    notes: bundle.notes,
    now: input.now,
  });

/**
 * Generates, checks, stores and applies a version, then queues the slave syncs. Throws GenSyncFailed when the bundle
 * is invalid or the master's agent refuses it for a reason no tenant backend explains; the previously active version
 * then stays active.
 */
export async function generateAndApply(
  env: Env,
  input: {
    runId: number;
    now: Date;
    queueSlaveSyncs: QueueSlaveSyncs;
    holdsLock: HoldsLock;
  },
): Promise<AppliedVersion> {
  const db = database(env.DB);
  const settings = proxySettings(env);
  await ensureFallbackCertificate(db, input.now);
  const [installation, certificateRows] = await Promise.all([loadInstallation(db), listCertificates(db)]);
  const generate = (excluded: ReadonlyMap<number, string>) => {
    try {
      return generateHaproxyBundle(installation, certificateRows, haproxySettingsOf(settings), excluded);
    } catch (error) {
      if (!(error instanceof InvalidConfiguration)) throw error;
      throw new GenSyncFailed(`invalid configuration: ${error.message}`, "the generated configuration is invalid");
    }
  };
  const checked = await checkedBundle(agentOf(settings), generate);
  // Numbered past what any agent runs: after a D1 reset the slaves would refuse lower numbers as older.
  const agentsRun = Math.max(checked.agentRuns ?? 0, await highestSlaveVersion(db));
  const stored = { ...input, agentsRun, kept: settings.HAPROXY_VERSIONS_KEPT };
  if (checked.refusal) throw await rejectCandidate(db, stored, checked, checked.refusal);
  const version = await storeCandidate(db, stored, checked);
  const shipped = await shipVersion(db, settings, { ...input, version, digest: checked.digest, files: checked.files });
  return { version, notes: [...checked.bundle.notes, ...shipped] };
}

/**
 * Has the master's agent validate and apply a stored pending version, makes it the active one and queues the slave
 * syncs; answers the notes about it (none names a project). Throws GenSyncFailed (the version is then rejected) when
 * the agent refuses it.
 */
async function shipVersion(
  db: Database,
  settings: ProxySettings,
  input: {
    version: number;
    now: Date;
    digest: string;
    files: Record<string, string>;
    queueSlaveSyncs: QueueSlaveSyncs;
    holdsLock: HoldsLock;
  },
): Promise<BundleNote[]> {
  const { version } = input;
  const warnings: string[] = [];
  if (settings.HAPROXY_AGENT_URL) {
    await pushToMaster(db, settings, input);
  } else {
    warnings.push(`WARN: HAPROXY_AGENT_URL is not set: version ${version} is stored but no load balancer was updated`);
  }
  if ((await activateVersion(db, version, settings.HAPROXY_VERSIONS_KEPT)) === "superseded") {
    // A later run made a newer version active while this one shipped (this run lost its lock): that one is in force,
    // and its own run syncs the slaves.
    warnings.push(`WARN: version ${version} was applied, but a newer version is in force: it is kept as history`);
    return warnings.map((text) => ({ project: null, text }));
  }
  const slaves = settings.SLAVE_AGENT_URLS;
  const syncs = await input.queueSlaveSyncs(slaves.map((agentUrl) => ({ version, agentUrl })));
  if ("refused" in syncs) warnings.push(syncs.refused);
  else warnings.push(...queuedNotes(version, slaves, syncs.queued));
  return warnings.map((text) => ({ project: null, text }));
}

/**
 * The master's push of a stored pending version. A lost answer is settled by asking the agent; a refusal rejects
 * the version, an outcome the agent could not tell marks it unknown; both throw GenSyncFailed. So does a run that lost
 * its lock, or a version older than the one the agent runs (another run shipped a newer one): both are rejected, the
 * second by the agent itself, so that the load balancer never goes back to an older version while D1 records the
 * newer one in force.
 */
async function pushToMaster(
  db: Database,
  settings: ProxySettings,
  input: { version: number; now: Date; digest: string; files: Record<string, string>; holdsLock: HoldsLock },
) {
  const { version } = input;
  if (!settings.HAPROXY_AGENT_TOKEN) {
    await rejectVersion(db, version, "HAPROXY_AGENT_TOKEN is not set");
    throw new GenSyncFailed("HAPROXY_AGENT_TOKEN is not set", AGENT_SUMMARY["not-configured"]);
  }
  // A lock that cannot be renewed is not held either: pushing then could undo a newer run's version.
  if (!(await input.holdsLock().catch(() => false))) {
    const message = `version ${version} was not pushed: this run lost its job lock (a heartbeat came too late)`;
    await rejectVersion(db, version, message);
    throw new GenSyncFailed(`${message}. ${NOTHING_PUSHED}`, "the run lost its job lock", NOTHING_PUSHED);
  }
  const push = {
    agentUrl: settings.HAPROXY_AGENT_URL!,
    token: settings.HAPROXY_AGENT_TOKEN,
    tokenPerAgent: settings.HAPROXY_AGENT_TOKENS_PER_AGENT,
    timeoutMs: settings.HAPROXY_AGENT_TIMEOUT,
    version,
    digest: input.digest,
    files: input.files,
    onlyIfNewer: true,
    pushId: masterPushId(version, input.now),
  };
  let result: AgentResult;
  try {
    result = await pushAndSettle(outbound, push, settings.HAPROXY_AGENT_QUERY_TIMEOUT);
  } catch (error) {
    if (!(error instanceof AgentError)) throw error;
    const cause = error.message.replace(/\.+$/, "");
    if (error.reason === "unknown") {
      await markVersionUnknown(db, version, error.message);
      const outcome = `Version ${version} is recorded as unknown. ${UNKNOWN_OUTCOME}`;
      throw new GenSyncFailed(`${cause}. ${outcome}`, AGENT_SUMMARY.unknown, UNKNOWN_OUTCOME);
    }
    await rejectVersion(db, version, error.message);
    throw new GenSyncFailed(`${cause}. The previous configuration is still active.`, AGENT_SUMMARY[error.reason]);
  }
  if (result.outcome === "stale") {
    const message = `agent ${push.agentUrl} refused version ${version}: the load balancer runs ${result.version}, a newer version`;
    await rejectVersion(db, version, message);
    throw new GenSyncFailed(`${message}. ${NEWER_STAYS}`, "the load balancer runs a newer version", NEWER_STAYS);
  }
}

// ---- rollback ----

/**
 * The version the master's agent says it runs (GET /v1/status), 0 when it cannot tell: its push then says whether it
 * runs a newer one, as a generation's check does.
 */
async function masterRuns(settings: ProxySettings): Promise<number> {
  const agent = agentOf(settings);
  if (!agent) return 0;
  try {
    const status = await agentStatus(outbound, { ...agent, timeoutMs: settings.HAPROXY_AGENT_QUERY_TIMEOUT });
    return status.version ?? 0;
  } catch (error) {
    if (!(error instanceof AgentError)) throw error;
    return 0;
  }
}

/**
 * POST /admin/haproxy/versions/{version}/activate: stores a stored version's text files again as a NEW version that
 * notes where it came from, with the certificates of the same names as they are now, and ships it like a generated
 * one (the master's agent checks it, the slaves follow: a new number, so they take it as newer).
 */
export async function restoreVersion(
  env: Env,
  input: {
    runId: number;
    now: Date;
    version: number;
    queueSlaveSyncs: QueueSlaveSyncs;
    holdsLock: HoldsLock;
  },
): Promise<AppliedVersion> {
  const db = database(env.DB);
  const settings = proxySettings(env);
  const stored = await findVersion(db, input.version);
  if (!stored) throw versionNotFound(input.version);
  const { files, missing } = await bundleOfVersion(db, stored.row, stored.files);
  if (missing.length > 0) {
    throw new GenSyncFailed(
      `version ${input.version} cannot be restored: its certificate${missing.length > 1 ? "s" : ""} ${missing.join(", ")} no longer exist${missing.length > 1 ? "" : "s"}`,
      "a certificate of that version no longer exists",
    );
  }
  const digest = await bundleDigest(files);
  const version = await storeVersion(db, {
    // Numbered past what any agent runs, as a generated version is: they all refuse a lower number as older.
    agentsRun: Math.max(await masterRuns(settings), await highestSlaveVersion(db)),
    kept: settings.HAPROXY_VERSIONS_KEPT,
    digest,
    jobRunId: input.runId,
    files: stored.files,
    certificateFiles: stored.row.certificateFiles,
    now: input.now,
    restoredFrom: input.version,
  });
  const shipped = await shipVersion(db, settings, { ...input, version, digest, files });
  return {
    version,
    notes: [{ project: null, text: `INFO: version ${version} restores version ${input.version}` }, ...shipped],
  };
}
