// Which job kinds only the proxy's master instance runs (spec 1: "Jobs run only on the master instance. A slave
// instance refuses them."): the cron leaves them out on a slave, and a slave's queue consumer refuses them.
import { proxySettings } from "../proxy/settings";
import { SettingsError } from "../shared/settings";
import type { JobKind } from "./messages";

/** Typed by kind, so that a new kind has to decide. */
export const MASTER_ONLY_JOBS: { readonly [K in JobKind]: boolean } = {
  // Prunes this instance's own job history: a slave's D1 grows as well, and nothing leaves the instance.
  housekeeping: false,
  // The news service has no master and slaves; INSTANCE_ROLE is the proxy's.
  "news-ingest": false,
  // The proxy's jobs write versions and certificates and push to the load balancers: a slave only serves reads.
  gensynchaprx: true,
  "haproxy-slave-sync": true,
  writesshprx: true,
  certificates: true,
};

/**
 * Why this instance must not run the kind, or undefined when it may. A role that cannot be read (invalid proxy
 * settings) refuses too: running a master's job on a slave is worse than missing one run until they are fixed.
 */
export function masterOnlyRefusal(env: object, kind: JobKind): string | undefined {
  if (!MASTER_ONLY_JOBS[kind]) return undefined;
  let role: string;
  try {
    role = proxySettings(env).INSTANCE_ROLE;
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    const why = error.message;
    return `The ${kind} job runs only on the master instance, and this instance's role cannot be read: ${why}`;
  }
  return role === "master" ? undefined : `This is a slave instance: the ${kind} job runs only on the master instance`;
}
