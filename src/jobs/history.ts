// The job_runs repository: record a run when it is queued, started and finished, and prune old runs.
import { and, count, desc, eq, gt, inArray, isNotNull, lt, sql } from "drizzle-orm";
import { unionAll } from "drizzle-orm/sqlite-core";
import { commitBatch, type Database, type Statement } from "../shared/db";
import { cutText } from "../shared/cut-text";
import { logWarn } from "../shared/log";
import { jobRuns } from "./tables";

/** The insert of a queued run, returning its id: run alone (createJobRun) or in a batch with the writes it carries. */
export function jobRunInsert(db: Database, input: { kind: string; trigger: string }) {
  return db.insert(jobRuns).values(input).returning({ id: jobRuns.id });
}

export async function createJobRun(db: Database, input: { kind: string; trigger: string }) {
  const [row] = await jobRunInsert(db, input);
  return row.id;
}

/**
 * Records several queued runs in one statement; returns their ids in the order given. The rows go as one JSON
 * parameter: a row of values each would pass D1's 100 bound parameters at 26 runs (a slave sync per slave agent).
 */
export async function createJobRuns(db: Database, inputs: { kind: string; trigger: string }[]): Promise<number[]> {
  const rows = await db.all<{ id: number }>(sql`
    insert into ${jobRuns} (kind, "trigger")
    select json_extract(run.value, '$.kind'), json_extract(run.value, '$.trigger')
    from json_each(${JSON.stringify(inputs)}) as run
    order by run.key
    returning id`);
  return rows.map((row) => row.id).sort((a, b) => a - b);
}

/**
 * The runs of `kind` that `trigger` queued after run `after` (its children: the ids past it bound the read): the ids
 * of those whose message went out, and the ends of the others, failed without ever starting (a send that failed, or
 * a message lost), oldest first.
 */
export async function childRunsOf(db: Database, input: { kind: string; trigger: string; after: number }) {
  const rows = await db
    .select({
      id: jobRuns.id,
      unsent: sql<number>`${jobRuns.state} = 'failed' and ${jobRuns.startedAt} is null`,
      endedAt: sql<number>`coalesce(${jobRuns.endedAt}, ${jobRuns.createdAt})`,
    })
    .from(jobRuns)
    .where(and(eq(jobRuns.kind, input.kind), gt(jobRuns.id, input.after), eq(jobRuns.trigger, input.trigger)))
    .orderBy(jobRuns.id);
  return {
    sent: rows.filter((row) => !row.unsent).map((row) => row.id),
    unsent: rows.filter((row) => row.unsent).map((row) => new Date(row.endedAt)),
  };
}

/**
 * The most characters a run's error, or one of its warnings, is stored with (cut, saying so, beyond): they may quote
 * what a job read from outside (a feed's parser quotes its input), and D1 refuses a value over 2 MB, which would
 * leave the run's end unrecorded and fail its message's whole batch. 8 KiB keeps whole the longest cause a job quotes
 * on purpose: an agent's haproxy -c output, cut to 4000 characters (haproxy-agent/programs.mjs MAX_OUTPUT).
 */
export const MAX_RUN_TEXT_CHARS = 8192;

const runText = (text: string) => cutText(text, MAX_RUN_TEXT_CHARS);

/** How a run ended (or, `queued`, waits for its retry): its warnings and its error. */
export type RunEnd = {
  id: number;
  now: Date;
  state: "succeeded" | "failed" | "queued";
  warnings?: string[];
  error?: string;
};

/** The waits before the second and third try of a run's end: a passing D1 error should not lose it. */
const RUN_END_RETRY_DELAYS_MS = [100, 400];

/**
 * Records a run's end, with `alongside` in the same D1 batch (what a run whose message was not sent takes back). The
 * write is tried up to three times: an end lost to a passing D1 error would leave the run `running` until the sweep
 * failed it as a dead worker, though its work was done. Trying again is harmless: the same end is written, and
 * warnings already recorded are not repeated.
 */
export async function finishJobRun(db: Database, input: RunEnd, alongside: readonly Statement[] = []) {
  for (const delayMs of RUN_END_RETRY_DELAYS_MS) {
    try {
      return await writeRunEnd(db, input, alongside);
    } catch (error) {
      logWarn(`jobs: could not record the end of run ${input.id}; trying again in ${delayMs} ms`, {
        error: error instanceof Error ? error.message : String(error),
      });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
  return writeRunEnd(db, input, alongside);
}

async function writeRunEnd(db: Database, input: RunEnd, alongside: readonly Statement[]) {
  const own = JSON.stringify((input.warnings ?? []).map(runText));
  const update = db
    .update(jobRuns)
    .set({
      state: input.state,
      endedAt: input.state === "queued" ? null : input.now,
      // Warnings that detached children appended while the run was going (appendJobWarnings), or since an earlier
      // attempt, follow its own; one a retry says again is not repeated.
      warnings: sql`(select json_group_array(value) from (
        select 0 as part, key, value from json_each(${own})
        union all select 1 as part, key, value from json_each(${jobRuns.warnings})
          where value not in (select value from json_each(${own}))
        order by part, key))`,
      error: input.error === undefined ? null : runText(input.error),
      // A retry's wait counts from now: the queued-run sweep measures silence from here.
      ...(input.state === "queued" ? { heartbeatAt: input.now } : {}),
    })
    .where(eq(jobRuns.id, input.id));
  if (alongside.length === 0) await update;
  else await commitBatch(db, [update, ...alongside]);
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** A run as the services' job routes answer it (GET /admin/jobs, GET /news/jobs): its times as ISO text. */
export const jobRunView = (row: typeof jobRuns.$inferSelect) => ({
  id: row.id,
  kind: row.kind,
  state: row.state,
  trigger: row.trigger,
  attempts: row.attempts,
  createdAt: iso(row.createdAt),
  startedAt: iso(row.startedAt),
  endedAt: iso(row.endedAt),
  warnings: row.warnings,
  error: row.error,
});

export async function getJobRun(db: Database, id: number) {
  const [row] = await db.select().from(jobRuns).where(eq(jobRuns.id, id)).limit(1);
  return row;
}

/** Deletes finished runs that ended before `before`; returns how many went. */
export async function pruneJobRuns(db: Database, input: { before: Date }): Promise<number> {
  const deleted = await db
    .delete(jobRuns)
    .where(and(sql`${jobRuns.state} in ('succeeded', 'failed')`, lt(jobRuns.endedAt, input.before)))
    .returning({ id: jobRuns.id });
  return deleted.length;
}

/**
 * Adds warnings to a run in one atomic UPDATE (several detached children, such as slave syncs, may report on the
 * same parent at once). A warning the run already has is not added again: a child delivered twice reports once.
 */
export async function appendJobWarnings(db: Database, input: { id: number; warnings: string[] }) {
  if (input.warnings.length === 0) return;
  await jobWarningsAppend(db, input);
}

/** The statement of appendJobWarnings, for a batch that writes the warnings with what they report. */
export function jobWarningsAppend(db: Database, input: { id: number; warnings: string[] }) {
  const added = JSON.stringify([...new Set(input.warnings.map(runText))]);
  const warnings = sql`(select json_group_array(value) from (
    select 0 as part, key, value from json_each(${jobRuns.warnings})
    union all select 1 as part, key, value from json_each(${added})
      where value not in (select value from json_each(${jobRuns.warnings}))
    order by part, key))`;
  return db.update(jobRuns).set({ warnings }).where(eq(jobRuns.id, input.id));
}

/**
 * Runs of the given kinds, newest first; `offset` skips that many (a page). One leg per kind, each read newest first
 * from (kind, id), merged by SQLite in id order: `kind IN (...)` with ORDER BY id would read and sort every run of
 * those kinds for a page. A query (awaited, it answers the rows), so that tests can read its plan.
 */
export function listJobRuns(db: Database, input: { kinds: string[]; limit: number; offset?: number }) {
  const [first, second, ...rest] = [...new Set(input.kinds)].map((kind) =>
    db.select().from(jobRuns).where(eq(jobRuns.kind, kind)),
  );
  const runs = second
    ? unionAll(first, second, ...rest)
    : (first ??
      db
        .select()
        .from(jobRuns)
        .where(sql`0`));
  return runs
    .orderBy(desc(jobRuns.id))
    .limit(input.limit)
    .offset(input.offset ?? 0);
}

/** How many runs of the given kinds there are. */
export async function countJobRuns(db: Database, input: { kinds: string[] }): Promise<number> {
  const [{ total }] = await db.select({ total: count() }).from(jobRuns).where(inArray(jobRuns.kind, input.kinds));
  return total;
}

/** The run of `kind` that started last (by its start time), if any: what a debounced call decides from. */
export async function latestStartedRun(db: Database, kind: string) {
  const [row] = await db
    .select({ id: jobRuns.id, state: jobRuns.state, startedAt: jobRuns.startedAt, trigger: jobRuns.trigger })
    .from(jobRuns)
    .where(and(eq(jobRuns.kind, kind), isNotNull(jobRuns.startedAt)))
    .orderBy(desc(jobRuns.startedAt), desc(jobRuns.id))
    .limit(1);
  return row;
}

/** Marks a run as started now (for jobs that run inside a request rather than from the queue). */
export async function startJobRun(db: Database, input: { kind: string; trigger: string; now: Date }): Promise<number> {
  const [row] = await db
    .insert(jobRuns)
    .values({
      kind: input.kind,
      trigger: input.trigger,
      state: "running",
      attempts: 1,
      startedAt: input.now,
      heartbeatAt: input.now,
    })
    .returning({ id: jobRuns.id });
  return row.id;
}
