// Publishers that fail an ingestion run through the queue consumer: one that never answers (or never ends its body),
// one whose connection fails, one that answers a malformed body. Each run records why and waits for the queue's
// retry; its cursor stays where the last good run left it, so the retry (or the next cron run) reads the same window
// and nothing published meanwhile is lost. HTTP errors: job.test.ts.
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createJobRun, getJobRun } from "../../../src/jobs/history";
import { MAX_ATTEMPTS } from "../../../src/jobs/retries";
import { FETCH_TIMEOUT_MS } from "../../../src/news/ingest/types";
import { newsIngestCursors } from "../../../src/news/store/tables";
import { getCursor } from "../../../src/news/store/upsert";
import { database } from "../../../src/shared/db";
import { deliverBatch } from "../../support/jobs-queue";
import { getJson, signUp } from "../../support/news-api";
import atomFeed from "../fixtures/newsroom-atom.xml?raw";
import guardianSearch from "../fixtures/guardian-search.json?raw";
import guardianRss from "../fixtures/guardian-business-rss.xml?raw";
import nytSearch from "../fixtures/nyt-articlesearch.json?raw";
import { ATOM_URL, NOW, RSS_URL } from "./ingest-fixtures";

const GUARDIAN = "https://content.guardianapis.com/search";
const NYT = "https://api.nytimes.com/svc/search/v2/articlesearch.json";
const PUBLISHERS = ["guardian", "nyt", `feed:${RSS_URL}`, `feed:${ATOM_URL}`];
/** Where the last good run of every publisher left its cursor: three days before the runs. */
const CURSOR = new Date(NOW.getTime() - 3 * 86_400_000);

/** What workerd's fetch throws when the connection is refused or dropped. */
const lost = () => new Error("Network connection lost.");

type Answer = (init: RequestInit | undefined) => Promise<Response>;

const db = () => database(env.DB);
const withPublishers = () =>
  ({
    ...env,
    GUARDIAN_API_KEY: "guardian-test-key",
    NYT_API_KEY: "nyt-test-key",
    NEWS_FEEDS: `${RSS_URL},${ATOM_URL}`,
  }) as unknown as Env;
const countArticles = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM articles").first<{ n: number }>())!.n;

const body = (text: string) => async () => new Response(text);
const good: Record<string, Answer> = {
  [GUARDIAN]: body(guardianSearch),
  [NYT]: body(nytSearch),
  [RSS_URL]: body(guardianRss),
  [ATOM_URL]: body(atomFeed),
};

/** Until the request's signal fires: what the runtime's fetch gives a publisher that accepted and never answers. */
const never: Answer = (init) =>
  new Promise((_, reject) => init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason)));

/** Headers and the start of a body that never ends, until the request's signal fires. */
const trickle: Answer = async (init) =>
  new Response(
    new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("<rss><channel>"));
        init!.signal!.addEventListener("abort", () => controller.error(init!.signal!.reason));
      },
    }),
  );

/** Answers each publisher URL (origin and path) with its handler; records the URLs asked. */
function publishers(answers: Record<string, Answer>) {
  const asked: URL[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    asked.push(url);
    const answer = answers[`${url.origin}${url.pathname}`];
    if (!answer) throw new TypeError(`unexpected outbound fetch to ${url.origin}${url.pathname}`);
    return answer(init);
  });
  return asked;
}

/** The time-outs the runs asked for; each signal fires after 200 ms instead of FETCH_TIMEOUT_MS. */
function shortTimeouts(): number[] {
  const asked: number[] = [];
  const timeout = AbortSignal.timeout.bind(AbortSignal);
  vi.spyOn(AbortSignal, "timeout").mockImplementation((ms) => {
    asked.push(ms);
    return timeout(200);
  });
  return asked;
}

/** One queued run per publisher, delivered in one batch as attempt `attempts`. */
async function deliver(runs: { runId: number; publisher: string }[], attempts: number) {
  const messages = runs.map(({ runId, publisher }, i) => ({
    id: `m${i}`,
    attempts,
    body: { kind: "news-ingest", runId, publisher },
  }));
  return deliverBatch(messages, withPublishers());
}

const queuedRuns = () =>
  Promise.all(
    PUBLISHERS.map(async (publisher) => ({
      publisher,
      runId: await createJobRun(db(), { kind: "news-ingest", trigger: "*/30 * * * *" }),
    })),
  );

beforeAll(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(NOW);
});

beforeEach(async () => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
  await env.DB.prepare("DELETE FROM articles").run();
  const rows = PUBLISHERS.map((publisher) => ({ publisher, fetchedUntil: CURSOR, updatedAt: CURSOR }));
  await db().delete(newsIngestCursors);
  await db().insert(newsIngestCursors).values(rows);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Each failing publisher's run waits for its retry with `error`, its cursor unchanged. */
async function expectRetried(runs: { runId: number; publisher: string }[], errors: Record<string, string>) {
  for (const { runId, publisher } of runs.filter((run) => run.publisher in errors)) {
    expect(await getJobRun(db(), runId)).toMatchObject({
      state: "queued",
      attempts: 1,
      warnings: [],
      error: errors[publisher],
    });
    expect(await getCursor(db(), publisher)).toEqual(CURSOR);
  }
}

describe("a publisher that gives no answer", () => {
  it("fails its run within FETCH_TIMEOUT_MS, keeps its cursor, and the retry reads the same window", async () => {
    const timeouts = shortTimeouts();
    publishers({ ...good, [GUARDIAN]: never, [RSS_URL]: trickle, [NYT]: () => Promise.reject(lost()) });
    const runs = await queuedRuns();
    const started = performance.now();
    const { result, retries } = await deliver(runs, 1);
    // Four exchanges, each bounded by its signal (200 ms here): nothing waits longer.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(timeouts).toEqual(Array(4).fill(FETCH_TIMEOUT_MS));
    expect(result.explicitAcks).toEqual(["m3"]);
    expect(result.retryMessages).toEqual([{ msgId: "m0" }, { msgId: "m1" }, { msgId: "m2" }]);
    for (const retry of retries.slice(0, 3)) expect(retry).toHaveBeenCalledWith({ delaySeconds: 30 });
    await expectRetried(runs, {
      guardian: "guardian did not answer within 15 s",
      nyt: "nyt could not be reached: Network connection lost.",
      [`feed:${RSS_URL}`]: `feed ${RSS_URL} did not send its whole answer within 15 s`,
    });
    // The feed that answered is stored, and only it moves its cursor.
    expect(await countArticles()).toBe(2);
    expect(await getCursor(db(), `feed:${ATOM_URL}`)).toEqual(NOW);

    vi.mocked(globalThis.fetch).mockRestore();
    const asked = publishers(good);
    const retry = await deliver(runs.slice(0, 3), 2);
    expect(retry.result.explicitAcks).toEqual(["m0", "m1", "m2"]);
    // From the cursor the last good run left, less the overlap: nothing published during the outage is skipped.
    expect(asked[0].searchParams.get("from-date")).toBe("2026-11-17");
    expect(asked[1].searchParams.get("begin_date")).toBe("20261117");
    for (const { runId, publisher } of runs.slice(0, 3)) {
      expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", attempts: 2, error: null });
      expect(await getCursor(db(), publisher)).toEqual(NOW);
    }
    expect(await countArticles()).toBe(8);
  });
});

describe("a publisher that answers a malformed body", () => {
  it("fails its run with what was wrong, stores nothing from it, and keeps its cursor", async () => {
    publishers({
      [GUARDIAN]: body('{"response": {"status": "ok", "results": ['),
      [NYT]: body(JSON.stringify({ status: "ERROR", errors: ["Invalid date"] })),
      [RSS_URL]: body('<rss version="2.0"><channel><item><title>Cut short'),
      [ATOM_URL]: body("<html><body>Moved</body></html>"),
    });
    const runs = await queuedRuns();
    const { result } = await deliver(runs, 1);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toEqual([{ msgId: "m0" }, { msgId: "m1" }, { msgId: "m2" }, { msgId: "m3" }]);
    await expectRetried(runs, {
      guardian: "guardian answered with a body that is not JSON",
      nyt: 'nyt answered status "ERROR"',
      // Refused whole, never half read: the parser validates the document first.
      [`feed:${RSS_URL}`]:
        `feed ${RSS_URL} is not well-formed XML: ` +
        `Invalid '[    "rss",    "channel",    "item",    "title"]' found.:1:1`,
      [`feed:${ATOM_URL}`]: `feed ${ATOM_URL} is neither RSS 2.0 nor Atom`,
    });
    expect(await countArticles()).toBe(0);
  });
});

describe("a feed whose parser quotes megabytes of it", () => {
  it("fails its run with the parser's message cut to 200 characters, and GET /news/jobs shows it", async () => {
    const name = "a".repeat(3_000_000);
    publishers({ ...good, [RSS_URL]: body(`<rss><channel><item><${name}>`) });
    // fast-xml-parser's message quotes the whole element name: 3 MB, past D1's 2 MB for a value.
    const message = `Invalid '[    "rss",    "channel",    "item",    "${name}"]' found.:1:1`;
    const error = `feed ${RSS_URL} is not well-formed XML: ${message.slice(0, 169)}… [${message.length - 169} more characters cut]`;
    const runs = await queuedRuns();
    const { result } = await deliver(runs, 1);
    expect(result.explicitAcks).toEqual(["m0", "m1", "m3"]);
    expect(result.retryMessages).toEqual([{ msgId: "m2" }]);
    await expectRetried(runs, { [`feed:${RSS_URL}`]: error });
    expect(error.length).toBeLessThanOrEqual(2048);

    const last = await deliver([runs[2]], MAX_ATTEMPTS);
    expect(last.result.explicitAcks).toEqual(["m0"]);
    expect(await getJobRun(db(), runs[2].runId)).toMatchObject({ state: "failed", attempts: 2, error });
    const admin = await signUp("faults-admin@example.com", { role: "admin" });
    const response = await getJson("/news/jobs?limit=100", admin.token);
    expect(response.status).toBe(200);
    const listed = (await response.json()) as { id: number; state: string; error: string | null }[];
    expect(listed.find((run) => run.id === runs[2].runId)).toMatchObject({ state: "failed", error });
  });
});
