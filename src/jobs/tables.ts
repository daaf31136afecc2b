// D1 table recording every detached job run (queued from cron or an API call, run by the queue consumer).
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const jobRuns = sqliteTable(
  "job_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    kind: text("kind").notNull(),
    /** queued → running → succeeded | failed (failed only once retries are exhausted). */
    state: text("state", { enum: ["queued", "running", "succeeded", "failed"] })
      .notNull()
      .default("queued"),
    /** What started it: a cron expression, "api (<user>)", or the run that queued it ("gensynchaprx run 12"). */
    trigger: text("trigger").notNull(),
    attempts: integer("attempts").notNull().default(0),
    warnings: text("warnings", { mode: "json" })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    error: text("error"),
    createdAt: integer("created_at", { mode: "timestamp_ms" })
      .notNull()
      .default(sql`(unixepoch() * 1000)`),
    startedAt: integer("started_at", { mode: "timestamp_ms" }),
    endedAt: integer("ended_at", { mode: "timestamp_ms" }),
    /**
     * The run's last sign of life: each heartbeat while it runs, and when a failed attempt is queued again. A running
     * run silent for JOB_HEARTBEAT_TIMEOUT, or a queued one for JOB_QUEUED_TIMEOUT, is failed by the sweep.
     */
    heartbeatAt: integer("heartbeat_at", { mode: "timestamp_ms" }),
  },
  // A debounced call looks up the latest started run of its kind, possibly every half second while it waits.
  // The sweep (every minute) looks for queued and running runs only. The job lists (the console polls GET
  // /admin/jobs every 2 s) read each kind newest first by id, and the metrics each kind's last end per outcome.
  (table) => [
    index("job_runs_kind_started_idx").on(table.kind, table.startedAt),
    index("job_runs_state_idx").on(table.state),
    index("job_runs_kind_id_idx").on(table.kind, table.id),
    index("job_runs_kind_state_ended_idx").on(table.kind, table.state, table.endedAt),
  ],
);
