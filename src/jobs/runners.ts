// What each job kind does. The work itself lives with the data it touches; this table only dispatches.
import { ingestPublisher } from "../news/ingest/run";
import { newsSettings } from "../news/settings";
import { database } from "../shared/db";
import { pruneJobRuns } from "./history";
import type { JobKind, JobMessage } from "./messages";
import { jobSettings } from "./settings";

export interface JobOutcome {
  warnings: string[];
}

type Runner<K extends JobKind> = (env: Env, message: Extract<JobMessage, { kind: K }>, now: Date) => Promise<JobOutcome>;

export const jobRunners: { [K in JobKind]: Runner<K> } = {
  async housekeeping(env, _message, now) {
    const days = jobSettings(env).JOB_HISTORY_DAYS;
    const removed = await pruneJobRuns(database(env.DB), { before: new Date(now.getTime() - days * 86_400_000) });
    return { warnings: [`INFO: removed ${removed} job runs older than ${days} days`] };
  },
  "news-ingest"(env, message, now) {
    // The global fetch is looked up at call time, so the tests' interception of outbound fetch applies.
    const fetcher = (url: string, init?: RequestInit) => fetch(url, init);
    return ingestPublisher(database(env.DB), { publisher: message.publisher, settings: newsSettings(env), fetch: fetcher, now });
  },
};
