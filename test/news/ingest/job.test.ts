// News ingestion as jobs: the half-hourly cron queues a run per publisher; the queue consumer ingests and retries.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { deliverBatch } from "../../support/jobs-queue";
import { createJobRun, getJobRun } from "../../../src/jobs/history";
import { MAX_ATTEMPTS } from "../../../src/jobs/retries";
import { registry } from "../../../src/job-registry";
import { database } from "../../../src/shared/db";
import atomFeed from "../fixtures/newsroom-atom.xml?raw";
import guardianSearch from "../fixtures/guardian-search.json?raw";
import guardianRss from "../fixtures/guardian-business-rss.xml?raw";
import nytSearch from "../fixtures/nyt-articlesearch.json?raw";
import wranglerToml from "../../../wrangler.toml?raw";
import { interceptFetch, requestedUrls, type RecordedResponse } from "../../support/news-api";
import { ATOM_URL, NOW, RSS_URL } from "./ingest-fixtures";

const CRON = "*/30 * * * *";

/** The Worker's env with the publisher keys and feeds set (the test config has none). */
const withPublishers = (overrides: Record<string, string> = {}) =>
  ({
    ...env,
    GUARDIAN_API_KEY: "guardian-test-key",
    NYT_API_KEY: "nyt-test-key",
    NEWS_FEEDS: `${RSS_URL},${ATOM_URL}`,
    ...overrides,
  }) as unknown as Env;

const recorded: Record<string, RecordedResponse> = {
  "https://content.guardianapis.com/search": { body: guardianSearch },
  "https://api.nytimes.com/svc/search/v2/articlesearch.json": { body: nytSearch },
  [RSS_URL]: { body: guardianRss, contentType: "application/rss+xml; charset=UTF-8" },
  [ATOM_URL]: { body: atomFeed, contentType: "application/atom+xml" },
};

const db = () => database(env.DB);
const countArticles = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM articles").first<{ n: number }>())!.n;

beforeAll(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(NOW);
});

let errorLog: { mock: { calls: unknown[][] } };
beforeEach(() => {
  // The runs log what they do; keep the test output to the results.
  vi.spyOn(console, "log").mockImplementation(() => {});
  errorLog = vi.spyOn(console, "error").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function queuedRun(publisher: string) {
  const runId = await createJobRun(db(), { kind: "news-ingest", trigger: CRON });
  return { runId, body: { kind: "news-ingest", runId, publisher } };
}

describe("news ingestion cron", () => {
  it("queues one message and one job run per publisher every 30 minutes", async () => {
    const send = vi.spyOn(env.JOBS, "send");
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: NOW, cron: CRON }), withPublishers(), ctx);
    await waitOnExecutionContext(ctx);
    const messages = send.mock.calls.map(([message]) => message as { kind: string; runId: number; publisher: string });
    expect(messages.map(({ kind, publisher }) => ({ kind, publisher }))).toEqual([
      { kind: "news-ingest", publisher: "guardian" },
      { kind: "news-ingest", publisher: "nyt" },
      { kind: "news-ingest", publisher: `feed:${RSS_URL}` },
      { kind: "news-ingest", publisher: `feed:${ATOM_URL}` },
    ]);
    for (const { runId } of messages) {
      expect(await getJobRun(db(), runId)).toMatchObject({ kind: "news-ingest", state: "queued", trigger: CRON });
    }
  });

  it("skips publishers without a key with a log line", async () => {
    const send = vi.spyOn(env.JOBS, "send");
    const log = vi.spyOn(console, "log");
    await worker.scheduled(
      createScheduledController({ scheduledTime: NOW, cron: CRON }),
      withPublishers({ NYT_API_KEY: "", NEWS_FEEDS: "" }),
      createExecutionContext(),
    );
    expect(send.mock.calls.map(([message]) => (message as { publisher: string }).publisher)).toEqual(["guardian"]);
    expect(log.mock.calls.map(([line]) => JSON.parse(String(line))["@message"])).toContain(
      "news: skipping publisher nyt: NYT_API_KEY is not set",
    );
  });

  it("is one of wrangler.toml's Cron Triggers", () => {
    const crons = JSON.parse(/^crons\s*=\s*(\[.*\])\s*$/m.exec(wranglerToml)![1]) as string[];
    expect(crons).toContain(CRON);
    for (const cron of crons) expect(Object.keys(registry.schedules)).toContain(cron);
  });
});

describe("news ingestion consumer", () => {
  it("ingests every publisher, retries only the one that fails, and stores each story once", async () => {
    const fetchSpy = interceptFetch({
      ...recorded,
      "https://api.nytimes.com/svc/search/v2/articlesearch.json": {
        status: 503,
        body: "<html>Service Unavailable</html>",
        contentType: "text/html",
      },
    });
    const runs = await Promise.all(["guardian", "nyt", `feed:${RSS_URL}`, `feed:${ATOM_URL}`].map(queuedRun));
    const { result, retries } = await deliverBatch(
      runs.map((run, i) => ({ id: `m${i}`, attempts: 1, body: run.body })),
      withPublishers(),
    );
    expect(result.explicitAcks).toEqual(["m0", "m2", "m3"]);
    expect(result.retryMessages).toEqual([{ msgId: "m1" }]);
    expect(retries[1]).toHaveBeenCalledWith({ delaySeconds: 30 });
    expect(requestedUrls(fetchSpy).map((url) => `${url.origin}${url.pathname}`)).toEqual([
      "https://content.guardianapis.com/search",
      "https://api.nytimes.com/svc/search/v2/articlesearch.json",
      RSS_URL,
      ATOM_URL,
    ]);
    expect(requestedUrls(fetchSpy)[0].searchParams.get("api-key")).toBe("guardian-test-key");

    expect(await getJobRun(db(), runs[0].runId)).toMatchObject({
      state: "succeeded",
      attempts: 1,
      warnings: ["INFO: guardian: 3 fetched, 3 new, 0 updated, 0 unchanged"],
      error: null,
    });
    expect(await getJobRun(db(), runs[1].runId)).toMatchObject({
      state: "queued",
      attempts: 1,
      error: "nyt answered HTTP 503",
    });
    const logged = errorLog.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(logged).toEqual([
      expect.objectContaining({
        "@message": `jobs: news-ingest run ${runs[1].runId} failed on attempt 1`,
        error: expect.objectContaining({ message: "nyt answered HTTP 503" }),
      }),
    ]);
    expect(await getJobRun(db(), runs[2].runId)).toMatchObject({
      state: "succeeded",
      warnings: [`INFO: feed:${RSS_URL}: 2 fetched, 1 new, 0 updated, 1 unchanged`],
    });
    expect(await getJobRun(db(), runs[3].runId)).toMatchObject({
      state: "succeeded",
      warnings: [`INFO: feed:${ATOM_URL}: 2 fetched, 2 new, 0 updated, 0 unchanged`],
    });
    expect(await countArticles()).toBe(6);

    // The retry arrives once the NYT answers again.
    fetchSpy.mockRestore();
    interceptFetch(recorded);
    const retry = await deliverBatch([{ id: "m1-again", attempts: 2, body: runs[1].body }], withPublishers());
    expect(retry.result.explicitAcks).toEqual(["m1-again"]);
    expect(await getJobRun(db(), runs[1].runId)).toMatchObject({
      state: "succeeded",
      attempts: 2,
      warnings: ["INFO: nyt: 2 fetched, 2 new, 0 updated, 0 unchanged"],
      error: null,
    });
    expect(await countArticles()).toBe(8);

    // A later run of every publisher finds nothing new: no duplicates across runs or publishers.
    const again = await Promise.all(["guardian", "nyt", `feed:${RSS_URL}`, `feed:${ATOM_URL}`].map(queuedRun));
    const second = await deliverBatch(
      again.map((run, i) => ({ id: `n${i}`, attempts: 1, body: run.body })),
      withPublishers(),
    );
    expect(second.result.explicitAcks).toEqual(["n0", "n1", "n2", "n3"]);
    expect(await countArticles()).toBe(8);
    const duplicates = await env.DB.prepare(
      "SELECT title, count(*) AS n FROM articles GROUP BY title HAVING n > 1",
    ).all();
    expect(duplicates.results).toEqual([]);
  });

  it("records a skipped publisher as a success with a warning, fetching nothing", async () => {
    const fetchSpy = interceptFetch(recorded);
    const run = await queuedRun("guardian");
    const { result } = await deliverBatch(
      [{ id: "s1", attempts: 1, body: run.body }],
      withPublishers({ GUARDIAN_API_KEY: "" }),
    );
    expect(result.explicitAcks).toEqual(["s1"]);
    expect(await getJobRun(db(), run.runId)).toMatchObject({
      state: "succeeded",
      warnings: ["SKIPPED: guardian: GUARDIAN_API_KEY is not set"],
    });
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("gives up on the last attempt, recording the failure", async () => {
    interceptFetch({ [RSS_URL]: { status: 500, body: "oops", contentType: "text/plain" } });
    const run = await queuedRun(`feed:${RSS_URL}`);
    const { result } = await deliverBatch([{ id: "f1", attempts: MAX_ATTEMPTS, body: run.body }], withPublishers());
    expect(result.explicitAcks).toEqual(["f1"]);
    expect(result.retryMessages).toEqual([]);
    expect(await getJobRun(db(), run.runId)).toMatchObject({
      state: "failed",
      error: `feed ${RSS_URL} answered HTTP 500`,
    });
  });

  it("acks a news message without a publisher as malformed", async () => {
    const { result } = await deliverBatch(
      [{ id: "bad", attempts: 1, body: { kind: "news-ingest", runId: 1 } }],
      withPublishers(),
    );
    expect(result.explicitAcks).toEqual(["bad"]);
    expect(result.retryMessages).toEqual([]);
  });
});
