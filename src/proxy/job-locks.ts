// The proxy jobs' locks, held in the JobLock Durable Object: gensynchaprx and writesshprx share one, the certificate
// maintenance has its own. A start whose lock is held answers 423; a holder that dies loses it after JOB_LOCK_TIMEOUT.
import type { JobLockState } from "../../durable-objects/job-lock";
import { HttpError } from "../shared/http/errors";
import { logError } from "../shared/log";
import { proxySettings } from "./settings";

export const CONFIG_LOCK = "haproxy-and-ssh-proxy";
export const MAINTENANCE_LOCK = "certificate-maintenance";

/** The spec's 423: the job (or the one sharing its lock) is already running. */
export class JobLocked extends HttpError {
  override name = "JobLocked";
  constructor(readonly lock: JobLockState) {
    super(423, `Job is already running (${lock.kind} since ${new Date(lock.acquiredAt).toISOString()})`);
  }
}

const locks = (env: Env) => env.JOB_LOCK.get(env.JOB_LOCK.idFromName("proxy-jobs"));

/** Takes (or, for the same holder, extends) the lock; throws JobLocked when another holder has it. */
export async function acquireJobLock(env: Env, name: string, request: { holder: string; kind: string }): Promise<void> {
  const result = await locks(env).acquire(name, { ...request, ttlMs: proxySettings(env).JOB_LOCK_TIMEOUT });
  if (!result.acquired) throw new JobLocked(result.lock);
}

export async function releaseJobLock(env: Env, name: string, holder: string): Promise<void> {
  await locks(env).release(name, holder);
}

/** Runs `work` holding the lock, and releases it however the work ends. */
export async function withJobLock<T>(
  env: Env,
  name: string,
  request: { holder: string; kind: string },
  work: () => Promise<T>,
): Promise<T> {
  await acquireJobLock(env, name, request);
  try {
    return await work();
  } finally {
    // A release that fails must not hide the work's own outcome: the lock then ends with JOB_LOCK_TIMEOUT.
    await releaseJobLock(env, name, request.holder).catch((error) =>
      logError(`proxy: could not release the ${name} lock`, error),
    );
  }
}
