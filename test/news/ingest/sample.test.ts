// NEWS_DEMO (issue 28): the half-hourly cron queues the bundled sample's publishers instead of the real ones, and the
// queue consumer ingests it through the real path (adapters, company links, the full-text index) without going online;
// its articles are listed and searched like any others, and running the cron again stores nothing twice.
import { createExecutionContext, createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { deliverBatch } from "../../support/jobs-queue";
import { getJobRun } from "../../../src/jobs/history";
import { database } from "../../../src/shared/db";
import { getJson, interceptFetch, signUp } from "../helpers";

const CRON = "*/30 * * * *";
const SOURCES = ["business.example.com.au", "markets.example.com", "newsroom.example.com.au"];
const SAMPLE_TITLES: [title: string, source: string, companies: string[]][] = [
  ["Westpac and NAB report steady mortgage arrears", "newsroom.example.com.au", ["NAB", "WBC"]],
  ["Woodside approves the next stage of an offshore gas field", "newsroom.example.com.au", ["WDS"]],
  ["Commonwealth Bank holds home loan rates as deposit competition eases", "business.example.com.au", ["CBA"]],
  ["Fortescue Bets on a Green Iron Pilot Plant", "markets.example.com", ["FMG"]],
  ["BHP and Rio Tinto study a shared rail corridor in the Pilbara", "business.example.com.au", ["BHP", "RIO"]],
  ["CSL Trims Its Forecast as Vaccine Demand Softens", "markets.example.com", ["CSL"]],
  ["Xero adds payroll tools for small employers", "newsroom.example.com.au", ["XRO"]],
  ["Qantas adds regional routes as jet fuel costs fall", "business.example.com.au", ["QAN"]],
  ["Macquarie Shifts Capital Toward Energy Transition Assets", "markets.example.com", ["MQG"]],
  ["Woolworths and Coles prepare for the mandatory grocery code", "business.example.com.au", ["COL", "WOW"]],
  ["Bunnings owner opens more trade centres (ASX: WES)", "newsroom.example.com.au", ["WES"]],
  ["Telstra extends satellite messaging to more handsets", "business.example.com.au", ["TLS"]],
  ["Lithium Rebound Lifts Australian Miners", "markets.example.com", ["MIN", "PLS"]],
];

const withDemo = (value: string, overrides: Record<string, string> = {}) =>
  ({ ...env, NEWS_DEMO: value, ...overrides }) as unknown as Env;

/** The cron's messages, captured rather than sent, so that only runBatch delivers them. */
async function runCron(workerEnv: Env) {
  const send = vi.spyOn(env.JOBS, "send").mockResolvedValue(undefined as never);
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: CRON }), workerEnv, ctx);
  const messages = send.mock.calls.map(([body]) => body as { kind: string; runId: number; publisher: string });
  send.mockRestore();
  return messages;
}

async function consume(messages: { runId: number }[], workerEnv: Env) {
  const delivery = messages.map((body, i) => ({ id: `m${i}`, attempts: 1, body }));
  return (await deliverBatch(delivery, workerEnv)).result;
}

const sampleCount = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM articles WHERE source IN (?, ?, ?)")
    .bind(...SOURCES)
    .first<{ n: number }>())!.n;

beforeEach(async () => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  // Each test starts without the sample: its articles and the sample publishers' cursors.
  await env.DB.batch([
    env.DB.prepare("DELETE FROM articles WHERE source IN (?, ?, ?)").bind(...SOURCES),
    env.DB.prepare("DELETE FROM news_ingest_cursors WHERE publisher LIKE 'sample:%'"),
  ]);
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("NEWS_DEMO=true", () => {
  it("has the cron queue one run per sample publisher instead of the publishers, keys or not", async () => {
    const messages = await runCron(
      withDemo("true", { GUARDIAN_API_KEY: "key", NYT_API_KEY: "key", NEWS_FEEDS: "https://feeds.example.com/rss" }),
    );
    expect(messages.map(({ kind, publisher }) => ({ kind, publisher }))).toEqual([
      { kind: "news-ingest", publisher: "sample:guardian" },
      { kind: "news-ingest", publisher: "sample:nyt" },
      { kind: "news-ingest", publisher: "sample:feed" },
    ]);
    for (const { runId } of messages) {
      expect(await getJobRun(database(env.DB), runId)).toMatchObject({ state: "queued", trigger: CRON });
    }
  });

  it("ingests the sample through the real path with no outbound fetch; the cron again stores nothing twice", async () => {
    const outbound = interceptFetch({});
    const demo = withDemo("true");
    const first = await runCron(demo);
    const result = await consume(first, demo);
    expect(result.explicitAcks).toEqual(["m0", "m1", "m2"]);
    expect(outbound).not.toHaveBeenCalled();
    expect(
      await Promise.all(first.map(async ({ runId }) => (await getJobRun(database(env.DB), runId))!.warnings)),
    ).toEqual([
      ["INFO: sample:guardian: 5 fetched, 5 new, 0 updated, 0 unchanged"],
      ["INFO: sample:nyt: 4 fetched, 4 new, 0 updated, 0 unchanged"],
      ["INFO: sample:feed: 4 fetched, 4 new, 0 updated, 0 unchanged"],
    ]);
    expect(await sampleCount()).toBe(13);

    const reader = await signUp("sample-reader@example.com");
    const listed = await getJson(`/news?sources=${SOURCES.join(",")}&limit=100`, reader.token);
    expect(listed.status).toBe(200);
    expect(listed.headers.get("X-Total-Count")).toBe("13");
    const articles = (await listed.json()) as { title: string; source: string; companies: string[]; url: string }[];
    expect(articles.map(({ title, source, companies }) => [title, source, companies])).toEqual(SAMPLE_TITLES);
    expect(articles.every(({ url }) => url.startsWith("https://"))).toBe(true);

    // Parsed as the publishers' answers are: HTML and entities of the abstracts removed, the RSS date read.
    const grocery = await getJson("/news?q=grocery%20code", reader.token);
    expect(await grocery.json()).toEqual([
      expect.objectContaining({
        title: "Woolworths and Coles prepare for the mandatory grocery code",
        abstract:
          "Both supermarket chains say shelf labels and unit prices will change before the code's first audit & suppliers expect clearer terms",
        publishedAt: "2026-11-23T09:30:00.000Z",
        thumbnail: null,
      }),
    ]);

    const search = await getJson("/search?topics=lithium&companyids=PLS&limit=5", reader.token);
    expect(search.status).toBe(200);
    const body = (await search.json()) as { data: { title: string; companies: { ticker: string }[] }[] };
    expect(body.data.map(({ title, companies }) => [title, companies.map(({ ticker }) => ticker)])).toEqual([
      ["Lithium Rebound Lifts Australian Miners", ["MIN", "PLS"]],
    ]);

    const again = await runCron(demo);
    expect((await consume(again, demo)).explicitAcks).toEqual(["m0", "m1", "m2"]);
    expect(await sampleCount()).toBe(13);
    const runs = await Promise.all(again.map(({ runId }) => getJobRun(database(env.DB), runId)));
    expect(runs.map((run) => [run!.state, run!.warnings])).toEqual([
      ["succeeded", ["INFO: sample:guardian: 5 fetched, 0 new, 0 updated, 5 unchanged"]],
      ["succeeded", ["INFO: sample:nyt: 4 fetched, 0 new, 0 updated, 4 unchanged"]],
      ["succeeded", ["INFO: sample:feed: 4 fetched, 0 new, 0 updated, 4 unchanged"]],
    ]);
  });
});

describe("NEWS_DEMO=false (the default)", () => {
  it("queues no sample publisher", async () => {
    expect(await runCron(withDemo("false"))).toEqual([]);
    expect(await runCron(withDemo(""))).toEqual([]);
  });

  it("skips a sample run queued while it was true, storing nothing", async () => {
    const messages = await runCron(withDemo("true"));
    expect((await consume(messages, withDemo("false"))).explicitAcks).toEqual(["m0", "m1", "m2"]);
    const runs = await Promise.all(messages.map(({ runId }) => getJobRun(database(env.DB), runId)));
    expect(runs.map((run) => [run!.state, run!.warnings])).toEqual(
      ["guardian", "nyt", "feed"].map((name) => ["succeeded", [`SKIPPED: sample:${name}: NEWS_DEMO is not true`]]),
    );
    expect(await sampleCount()).toBe(0);
  });
});
