// The jobs as API calls run them: gensynchaprx and the version activations at once under the shared lock (423 when
// held), recorded as job runs; a tenant's gensynchaprx joins the next run; the detached jobs take their lock at once,
// then queue the run holding it.
import { enqueueJob, type RecordedWithRun } from "../../jobs/enqueue";
import { withRunHeartbeat } from "../../jobs/heartbeat";
import { getJobRun, latestStartedRun, finishJobRun, startJobRun } from "../../jobs/history";
import { JobLocked } from "../../jobs/locks";
import { database, type Database } from "../../shared/db";
import { DomainError } from "../../shared/domain-errors";
import { logError } from "../../shared/log";
import { RunFailed } from "../domain-errors";
import {
  GENSYNC_FAILED,
  generateAndApply,
  genSyncFailureFor,
  restoreVersion,
  type AppliedVersion,
  type HoldsLock,
} from "../haproxy/sync";
import type { BundleNote } from "../haproxy/config";
import { joinOrRun, type JoinPorts } from "../haproxy/joining";
import { latestVersionOfRun, notesOfRun } from "../haproxy/versions";
import { mayAccessProject, type Caller } from "../installation/api-users";
import { proxySettings } from "../settings";
import { restoreSshProxyVersion, sshProxySettingsOf } from "../sshproxy/versions";
import { certificatesJob, genSyncJob, queueSlaveSyncs, sshProxyJob } from "./definitions";
import { acquireJobLock, CONFIG_LOCK, releaseJobLock, renewJobLock, withJobLock } from "./locks";

/**
 * Takes the job's lock and queues the run holding it, `recorded` written in the run's own batch (the call's audit
 * entry); returns the run id. Throws JobLocked (423) when held.
 */
export async function startDetachedJob(
  env: Env,
  input: {
    kind: typeof sshProxyJob.kind | typeof certificatesJob.kind;
    lock: string;
    caller: string;
    recorded: RecordedWithRun;
  },
): Promise<number> {
  const holder = crypto.randomUUID();
  await acquireJobLock(env, input.lock, { holder, kind: input.kind, forQueuedRun: true });
  try {
    const request = { kind: input.kind, lockHolder: holder };
    return await enqueueJob(env, request, `api (${input.caller})`, input.recorded);
  } catch (error) {
    await releaseJobLock(env, input.lock, holder);
    throw error;
  }
}

/** A generation's notes with their texts as the run records them. */
const withWarnings = <T extends { notes: BundleNote[] }>(result: T): T & { warnings: string[] } => ({
  ...result,
  warnings: result.notes.map((note) => note.text),
});

/**
 * GET /admin/gensynchaprx as the administrator calls it: under the shared lock (423 when held), recorded as a job
 * run. A failure is recorded in full on the run and thrown as genSyncFailureFor the caller.
 */
export async function runGenSyncFromApi(
  env: Env,
  input: { caller: Caller; now: Date },
): Promise<{ runId: number; notes: BundleNote[] }> {
  return runHaproxyFromApi<AppliedVersion & { warnings: string[] }>(
    env,
    { ...input, trigger: `api (${input.caller.username})` },
    (runId, holdsLock) =>
      generateAndApply(env, { runId, now: input.now, queueSlaveSyncs: queueSlaveSyncs(env, runId), holdsLock }).then(
        (applied) => withWarnings(applied),
      ),
  );
}

/** The trigger of a rollback run, and how it is recognised: such a run never carries anybody's latest changes. */
const restoreTrigger = (caller: Caller, version: number) => `api (${caller.username}): activate version ${version}`;
const RESTORE_TRIGGER = /: activate version \d+$/;

/**
 * GET /admin/gensynchaprx as any caller: the administrator's call (and every call when PROXY_GENERATION_DEBOUNCE is
 * 0) runs at once; a tenant's call joins the first run that starts after it arrived, waiting out the debounce window
 * since the last run (haproxy/joining.ts), so that tenants together cause at most one generation, and one reload, per
 * window. A joined run answers with its own notes and run id.
 */
export async function runGenSyncForCaller(
  env: Env,
  input: { caller: Caller; now: Date },
): Promise<{ runId: number; notes: BundleNote[]; joined: boolean }> {
  const settings = proxySettings(env);
  const debounceMs = settings.PROXY_GENERATION_DEBOUNCE;
  const runNow = (now: Date) => runGenSyncFromApi(env, { ...input, now }).then((run) => ({ ...run, joined: false }));
  if (input.caller.isAdmin || debounceMs === 0) return runNow(input.now);
  const db = database(env.DB);
  // Whether a succeeded run shipped a version older than its start: fixed once it has ended, so one read per run and
  // call, not one per look while the call waits out the window.
  const shippedEarlier = new Map<number, Promise<boolean>>();
  const shipsEarlierVersion = (runId: number, startedAt: number) => {
    let known = shippedEarlier.get(runId);
    if (!known) {
      known = latestVersionOfRun(db, runId).then(
        (shipped) => shipped !== undefined && shipped.createdAt.getTime() < startedAt,
      );
      shippedEarlier.set(runId, known);
    }
    return known;
  };
  const ports: JoinPorts<{ runId: number; notes: BundleNote[]; joined: boolean }> = {
    async latestStartedRun() {
      const row = await latestStartedRun(db, genSyncJob.kind);
      if (!row) return undefined;
      const startedAt = row.startedAt!.getTime();
      // A queued run's retry answers the version an earlier attempt generated, if it shipped one.
      const earlier = row.state === "succeeded" && (await shipsEarlierVersion(row.id, startedAt));
      return { ...row, startedAt, reships: earlier || RESTORE_TRIGGER.test(row.trigger) };
    },
    run: () => runNow(new Date()),
    joined: (runId) => joinedRun(db, runId),
    isBusy: (error) => error instanceof JobLocked,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    now: () => Date.now(),
  };
  // Long enough for one window and a run that checks and applies (two agent calls) before it.
  const deadlineMs = debounceMs + 2 * settings.HAPROXY_AGENT_TIMEOUT + 10_000;
  return joinOrRun(ports, { debounceMs, deadlineMs });
}

/**
 * The warnings of a generation as the caller may read them: the administrator all of them; anybody else only those
 * about projects it may access (never another tenant's backends or domains, nor the installation's agents).
 */
export const warningsFor = (caller: Caller, notes: readonly BundleNote[]): string[] =>
  notes
    .filter((note) => caller.isAdmin || (note.project !== null && mayAccessProject(caller, note.project)))
    .map((note) => note.text);

/** The outcome of a run a tenant's call joined: its notes, or its failure as a tenant may read it (the run's id). */
async function joinedRun(db: Database, runId: number) {
  const [run, notes] = await Promise.all([getJobRun(db, runId), notesOfRun(db, runId)]);
  if (run?.state !== "succeeded" || notes === undefined) {
    const where = `(job run ${runId}; an administrator can read GET /admin/jobs/${runId})`;
    throw new RunFailed("failed", `${GENSYNC_FAILED}the run this call joined failed ${where}`, runId);
  }
  return { runId, notes, joined: true };
}

/**
 * POST /admin/haproxy/versions/{version}/activate: re-ships a stored version as a new one, as gensynchaprx ships a
 * generated one (its lock, its run, its answers).
 */
export async function runHaproxyRestoreFromApi(
  env: Env,
  input: { caller: Caller; now: Date; version: number },
): Promise<{ runId: number; version: number; warnings: string[] }> {
  return runHaproxyFromApi(
    env,
    { ...input, trigger: restoreTrigger(input.caller, input.version) },
    (runId, holdsLock) =>
      restoreVersion(env, {
        runId,
        now: input.now,
        version: input.version,
        queueSlaveSyncs: queueSlaveSyncs(env, runId),
        holdsLock,
      }).then((applied) => withWarnings(applied)),
  );
}

/** Recorded as a gensynchaprx run; every failure answers the spec's 500 message (see runGenSyncFromApi). */
function runHaproxyFromApi<T extends { warnings: string[] }>(
  env: Env,
  input: { caller: Caller; now: Date; trigger: string },
  work: (runId: number, holdsLock: HoldsLock) => Promise<T>,
): Promise<T & { runId: number }> {
  return runConfigJobFromApi(env, {
    kind: genSyncJob.kind,
    trigger: input.trigger,
    now: input.now,
    work: (_db, runId, holdsLock) => work(runId, holdsLock),
    failed: (expected, _error, runId) => {
      const failure = expected ?? new DomainError("failed", `${GENSYNC_FAILED}internal error (see the logs)`);
      return { recorded: failure.message, thrown: genSyncFailureFor(input.caller, failure, runId) };
    },
  });
}

/**
 * An API call's run under the shared lock (423 when held), recorded as a run of `kind`: succeeded with the work's
 * warnings, or failed with what `failed` records, which also says what the caller gets. `expected` is the failure
 * when it is a DomainError; any other is logged, and its text stays out of the run and the answer.
 */
async function runConfigJobFromApi<T extends { warnings: string[] }>(
  env: Env,
  input: {
    kind: typeof genSyncJob.kind | typeof sshProxyJob.kind;
    trigger: string;
    now: Date;
    /** `holdsLock` renews the run's lock, false when its lease ended. */
    work: (db: Database, runId: number, holdsLock: HoldsLock) => Promise<T>;
    failed: (expected: DomainError | undefined, error: unknown, runId: number) => { recorded: string; thrown: unknown };
  },
): Promise<T & { runId: number }> {
  const holder = crypto.randomUUID();
  return withJobLock(env, CONFIG_LOCK, { holder, kind: input.kind }, async () => {
    const db = database(env.DB);
    const runId = await startJobRun(db, { kind: input.kind, trigger: input.trigger, now: input.now });
    try {
      const holdsLock = () => renewJobLock(env, CONFIG_LOCK, holder);
      const result = await withRunHeartbeat(env, runId, () => input.work(db, runId, holdsLock));
      await finishJobRun(db, { id: runId, now: new Date(), state: "succeeded", warnings: result.warnings });
      return { ...result, runId };
    } catch (error) {
      const expected = error instanceof DomainError ? error : undefined;
      if (!expected) logError(`proxy: ${input.kind} run ${runId} failed`, error);
      const { recorded, thrown } = input.failed(expected, error, runId);
      await finishJobRun(db, { id: runId, now: new Date(), state: "failed", error: recorded });
      throw thrown;
    }
  });
}

/**
 * POST /admin/sshproxy/versions/{version}/activate: under the lock writesshprx takes (423 when held), stores an
 * older version again as the one in force, recorded as a writesshprx run.
 */
export async function runSshProxyRestoreFromApi(
  env: Env,
  input: { caller: Caller; now: Date; version: number },
): Promise<{ runId: number; version: number; warnings: string[] }> {
  return runConfigJobFromApi(env, {
    kind: sshProxyJob.kind,
    trigger: `api (${input.caller.username}): activate version ${input.version}`,
    now: input.now,
    work: (db, runId) =>
      restoreSshProxyVersion(db, {
        runId,
        version: input.version,
        kept: proxySettings(env).SSH_PROXY_VERSIONS_KEPT,
        now: input.now,
        ...sshProxySettingsOf(proxySettings(env)),
      }),
    failed: (expected, error) => ({ recorded: expected?.message ?? "internal error (see the logs)", thrown: error }),
  });
}
