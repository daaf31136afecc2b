// Job locks, held in the JobLock Durable Object: a job whose lock another holder has is refused (JobLocked, which
// the service's errors.ts answers with the spec's 423), the same holder may take its lock again (extending it), and
// a holder that died loses it after the scope's TTL.
import type { JobLockState } from "../../durable-objects/job-lock";
import { DomainError } from "../shared/domain-errors";
import { logError } from "../shared/log";

/** Which JobLock object holds a service's locks (its idFromName string), and how long a lock outlives its holder. */
export interface LockScope {
  objectName: string;
  ttlMs: number;
}

/** The job (or the one sharing its lock) is already running. */
export class JobLocked extends DomainError {
  override name = "JobLocked";
  constructor(readonly lock: JobLockState) {
    super("locked", `Job is already running (${lock.kind} since ${new Date(lock.acquiredAt).toISOString()})`);
  }
}

const lockObject = (env: Env, scope: LockScope) => env.JOB_LOCK.get(env.JOB_LOCK.idFromName(scope.objectName));

/** Takes (or, for the same holder, extends) the lock; throws JobLocked when another holder has it. */
export async function acquireLock(
  env: Env,
  scope: LockScope,
  name: string,
  request: { holder: string; kind: string },
): Promise<void> {
  const result = await lockObject(env, scope).acquire(name, { ...request, ttlMs: scope.ttlMs });
  if (!result.acquired) throw new JobLocked(result.lock);
}

export async function releaseLock(env: Env, scope: LockScope, name: string, holder: string): Promise<void> {
  await lockObject(env, scope).release(name, holder);
}

/** Runs `work` holding the lock, and releases it however the work ends. */
export async function withLock<T>(
  env: Env,
  scope: LockScope,
  name: string,
  request: { holder: string; kind: string },
  work: () => Promise<T>,
): Promise<T> {
  await acquireLock(env, scope, name, request);
  try {
    return await work();
  } finally {
    // A release that fails must not hide the work's own outcome: the lock then ends with the scope's TTL.
    await releaseLock(env, scope, name, request.holder).catch((error) =>
      logError(`jobs: could not release the ${name} lock`, error),
    );
  }
}
