// Quotas (issue 27, item 7): what one project may hold, and what the whole installation may (so that one HAProxy
// generation fits the Worker's memory). Checked by guards inside the write's own batch against project_usage, which
// triggers keep (migrations/0011), so two concurrent writes can never pass a limit together. Only a write that makes
// a project hold more of something is checked, so a project past a lowered limit may still shrink.
import { sql } from "drizzle-orm";
import { QuotaExceeded } from "../domain-errors";
import type { Guard } from "./guards";
import { projectUsage } from "./tables";

/** What a project holds, as project_usage counts it. */
export type Measure = "backends" | "containers" | "domains" | "publicCaDomains" | "servers" | "paramsBytes";

/** The limits a write must keep (the settings PROXY_MAX_*). */
export interface Limits {
  perProject: Record<"backends" | "containers" | "domains" | "paramsBytes", number>;
  installation: Record<"backends" | "servers" | "domains" | "publicCaDomains" | "paramsBytes", number>;
}

/** A write's growth: the project it makes hold more, and of what. */
export interface Growth {
  project: { id: number; label: string };
  measures: readonly Measure[];
}

const nouns: Record<Measure, string> = {
  backends: "backends",
  containers: "containers",
  domains: "domains",
  publicCaDomains: "domains with a public CA certificate",
  servers: "container links",
  paramsBytes: "bytes of params",
};

const projectSettings: Record<keyof Limits["perProject"], string> = {
  backends: "PROXY_MAX_BACKENDS_PER_PROJECT",
  containers: "PROXY_MAX_CONTAINERS_PER_PROJECT",
  domains: "PROXY_MAX_DOMAINS_PER_PROJECT",
  paramsBytes: "PROXY_MAX_PARAMS_BYTES_PER_PROJECT",
};

const installationSettings: Record<keyof Limits["installation"], string> = {
  backends: "PROXY_MAX_INSTALLATION_BACKENDS",
  servers: "PROXY_MAX_INSTALLATION_SERVERS",
  domains: "PROXY_MAX_INSTALLATION_DOMAINS",
  publicCaDomains: "PROXY_MAX_INSTALLATION_PUBLIC_CA_DOMAINS",
  paramsBytes: "PROXY_MAX_INSTALLATION_PARAMS_BYTES",
};

const column = (measure: Measure) => projectUsage[measure];

/** The guards of a write's growth: each project's quotas, then the installation's bounds (each checked once). */
export function quotaGuards(limits: Limits | undefined, growth: readonly Growth[]): Guard[] {
  if (!limits) return [];
  const guards: Guard[] = [];
  const grown = new Set<Measure>();
  for (const { project, measures } of growth) {
    for (const measure of measures) {
      grown.add(measure);
      if (!(measure in limits.perProject)) continue;
      const limit = limits.perProject[measure as keyof Limits["perProject"]];
      const setting = projectSettings[measure as keyof Limits["perProject"]];
      guards.push({
        refusal: sql`(select 'over' from ${projectUsage}
          where ${projectUsage.projectId} = ${project.id} and ${column(measure)} > ${limit})`,
        answer: () =>
          new QuotaExceeded(
            `Quota exceeded: project ${project.label} may hold at most ${limit} ${nouns[measure]} (${setting}), nothing was changed`,
          ),
      });
    }
  }
  for (const measure of grown) {
    if (!(measure in limits.installation)) continue;
    const limit = limits.installation[measure as keyof Limits["installation"]];
    const setting = installationSettings[measure as keyof Limits["installation"]];
    guards.push({
      // One row per project: the installation's total without counting its rows.
      refusal: sql`(select 'over' where (select sum(${column(measure)}) from ${projectUsage}) > ${limit})`,
      answer: () =>
        new QuotaExceeded(
          `Installation limit reached: the installation may hold at most ${limit} ${nouns[measure]} (${setting}), nothing was changed`,
        ),
    });
  }
  return guards;
}

const encoder = new TextEncoder();

/** UTF-8 bytes of a params text, as project_usage counts them. */
export const paramsBytes = (text: string | null | undefined) => (text ? encoder.encode(text).length : 0);
