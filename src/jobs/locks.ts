// Job locks, held in the JobLock Durable Object: a job whose lock another holder has is refused (JobLocked, which
// the service's errors.ts answers with the spec's 423). A running holder renews its lock with its heartbeat, so a
// holder that died loses it within JOB_HEARTBEAT_TIMEOUT; a lock an API call took for the run it queued waits the
// scope's TTL for that run, which takes it over once. A live lock is never taken twice, even by its own holder.
import type { JobLockState } from "../../durable-objects/job-lock";
import { DomainError } from "../shared/domain-errors";
import { logError, logWarn } from "../shared/log";
import { beatIntervalMs, withHeartbeat } from "./heartbeat";
import { jobLivenessSettings } from "./settings";

/** Which JobLock object holds a service's locks (its idFromName string), and how long a lock waits for its queued run. */
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

/**
 * Takes the lock (or, for the run an API call queued with its holder, takes it over); throws JobLocked when another
 * holder has it, or when this holder already runs with it (a message delivered twice). `forQueuedRun`: an API call
 * takes it for the run it queues, which may wait in the queue, so it lasts the scope's TTL; otherwise it lasts one
 * heartbeat timeout, and the holder renews it (renewLock).
 */
export async function acquireLock(
  env: Env,
  scope: LockScope,
  name: string,
  request: { holder: string; kind: string; forQueuedRun?: boolean },
): Promise<void> {
  const ttlMs = request.forQueuedRun ? scope.ttlMs : jobLivenessSettings(env).JOB_HEARTBEAT_TIMEOUT;
  const result = await lockObject(env, scope).acquire(name, { ...request, ttlMs });
  if (!result.acquired) throw new JobLocked(result.lock);
}

/** Extends a running holder's lock by one heartbeat timeout; false when the holder lost it. */
export async function renewLock(env: Env, scope: LockScope, name: string, holder: string): Promise<boolean> {
  return lockObject(env, scope).renew(name, holder, jobLivenessSettings(env).JOB_HEARTBEAT_TIMEOUT);
}

export async function releaseLock(env: Env, scope: LockScope, name: string, holder: string): Promise<void> {
  await lockObject(env, scope).release(name, holder);
}

/** Runs `work` holding the lock, renewing it while the work goes, and releases it however the work ends. */
export async function withLock<T>(
  env: Env,
  scope: LockScope,
  name: string,
  request: { holder: string; kind: string },
  work: () => Promise<T>,
): Promise<T> {
  await acquireLock(env, scope, name, request);
  const intervalMs = beatIntervalMs(jobLivenessSettings(env).JOB_HEARTBEAT_TIMEOUT);
  try {
    const beat = async () => {
      // The work goes on (it may be nearly done), but whoever reads the logs learns why a second run could start.
      if (!(await renewLock(env, scope, name, request.holder)))
        logWarn(`jobs: the ${name} lock of ${request.kind} was lost: a heartbeat came after its lease ended`);
    };
    return await withHeartbeat(`the ${name} lock`, intervalMs, beat, work);
  } finally {
    // A release that fails must not hide the work's own outcome: the lock then ends with its heartbeat timeout.
    await releaseLock(env, scope, name, request.holder).catch((error) =>
      logError(`jobs: could not release the ${name} lock`, error),
    );
  }
}
