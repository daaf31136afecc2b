// Feeds that give no answer, fetched by the runtime itself (test/global-setup.ts serves them): one that accepts the
// request and never answers, one whose body never ends, one whose port refuses the connection. The runtime's fetch
// ends each at its signal (FETCH_TIMEOUT_MS, shortened here), and each run records why and waits for its retry.
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createJobRun, getJobRun } from "../../../src/jobs/history";
import { FETCH_TIMEOUT_MS } from "../../../src/news/ingest/types";
import { getCursor } from "../../../src/news/store/upsert";
import { database } from "../../../src/shared/db";
import { deliverBatch } from "../../support/jobs-queue";

const SILENT = `${env.TEST_PUBLISHER_URL}/silent`;
const TRICKLE = `${env.TEST_PUBLISHER_URL}/trickle`;
const REFUSED = env.TEST_REFUSED_URL;
/** What the test's signals wait instead of FETCH_TIMEOUT_MS. */
const SHORT_MS = 1000;

const db = () => database(env.DB);

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("feeds that give no answer, through the runtime's fetch", () => {
  it("end within FETCH_TIMEOUT_MS, or at once when refused; each run records why and is retried", async () => {
    const timeouts: number[] = [];
    const timeout = AbortSignal.timeout.bind(AbortSignal);
    vi.spyOn(AbortSignal, "timeout").mockImplementation((ms) => {
      timeouts.push(ms);
      return timeout(SHORT_MS);
    });
    const feeds = [SILENT, TRICKLE, REFUSED];
    const runs = await Promise.all(
      feeds.map(async (url) => ({ url, runId: await createJobRun(db(), { kind: "news-ingest", trigger: "test" }) })),
    );
    const workerEnv = { ...env, NEWS_FEEDS: feeds.join(",") } as unknown as Env;
    const elapsed: number[] = [];
    for (const [i, { url, runId }] of runs.entries()) {
      const started = performance.now();
      const { result } = await deliverBatch(
        [{ id: `m${i}`, attempts: 1, body: { kind: "news-ingest", runId, publisher: `feed:${url}` } }],
        workerEnv,
      );
      elapsed.push(performance.now() - started);
      expect(result.retryMessages).toEqual([{ msgId: `m${i}` }]);
    }
    expect(timeouts).toEqual([FETCH_TIMEOUT_MS, FETCH_TIMEOUT_MS, FETCH_TIMEOUT_MS]);
    // Bounded by the signal (1 s here) however long the publisher waits; a refused connection does not wait for it.
    expect(elapsed[0]).toBeGreaterThanOrEqual(SHORT_MS - 50);
    expect(elapsed[1]).toBeGreaterThanOrEqual(SHORT_MS - 50);
    for (const ms of elapsed.slice(0, 2)) expect(ms).toBeLessThan(SHORT_MS + 5000);
    expect(elapsed[2]).toBeLessThan(SHORT_MS);
    const errors = [
      `feed ${SILENT} did not answer within 15 s`,
      `feed ${TRICKLE} did not send its whole answer within 15 s`,
      `feed ${REFUSED} could not be reached: Network connection lost.`,
    ];
    for (const [i, { url, runId }] of runs.entries()) {
      expect(await getJobRun(db(), runId)).toMatchObject({ state: "queued", attempts: 1, error: errors[i] });
      expect(await getCursor(db(), `feed:${url}`)).toBeUndefined();
    }
  });
});
