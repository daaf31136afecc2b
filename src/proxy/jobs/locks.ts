// The proxy's job locks: gensynchaprx and writesshprx share one, the certificate maintenance has its own.
import { acquireLock, releaseLock, renewLock, withLock, type LockScope } from "../../jobs/locks";
import { proxySettings } from "../settings";

export const CONFIG_LOCK = "haproxy-and-ssh-proxy";
export const MAINTENANCE_LOCK = "certificate-maintenance";

/** The proxy's locks live in one JobLock object; one taken for a queued run waits JOB_LOCK_TIMEOUT for it. */
const proxyLocks = (env: Env): LockScope => ({ objectName: "proxy-jobs", ttlMs: proxySettings(env).JOB_LOCK_TIMEOUT });

export const acquireJobLock = (
  env: Env,
  name: string,
  request: { holder: string; kind: string; forQueuedRun?: boolean },
) => acquireLock(env, proxyLocks(env), name, request);
export const renewJobLock = (env: Env, name: string, holder: string) => renewLock(env, proxyLocks(env), name, holder);
export const releaseJobLock = (env: Env, name: string, holder: string) =>
  releaseLock(env, proxyLocks(env), name, holder);
export const withJobLock = <T>(
  env: Env,
  name: string,
  request: { holder: string; kind: string },
  work: () => Promise<T>,
) => withLock(env, proxyLocks(env), name, request, work);
