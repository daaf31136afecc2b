// The cursor of a run cut short (at the Guardian's or NYT's page cap, or by an NYT 429 on a later page): the next runs
// go on from the last item read, so that everything inside the window is stored in the end.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { ingestPublisher } from "../../../src/news/ingest/run";
import type { Fetcher } from "../../../src/news/ingest/types";
import { NewsSettings } from "../../../src/news/settings";
import { database } from "../../../src/shared/db";
import { getCursor } from "../../../src/news/store/upsert";
import { NOW, quietRunLogs } from "./ingest-fixtures";

const db = () => database(env.DB);
const settings = (overrides: Record<string, string> = {}) =>
  NewsSettings.parse({ GUARDIAN_API_KEY: "guardian-test-key", NYT_API_KEY: "nyt-test-key", ...overrides });

/** `count` publication times, `stepMinutes` apart from `first`. */
const times = (first: string, count: number, stepMinutes: number) =>
  Array.from({ length: count }, (_, i) => new Date(Date.parse(first) + i * stepMinutes * 60_000));

/**
 * A Guardian Content API or NYT Article Search API over `dates`, as they page: only what was published from the asked
 * day on, oldest first (the order the adapters must ask for), 50 or 10 to a page. `status(page)` may answer an error.
 */
function fakeApi(publisher: "guardian" | "nyt", dates: Date[], status: (page: number) => number = () => 200) {
  const asked: URLSearchParams[] = [];
  const fetcher: Fetcher = async (text) => {
    const params = new URL(text).searchParams;
    asked.push(params);
    const page = Number(params.get("page"));
    if (status(page) !== 200) return new Response("{}", { status: status(page) });
    const day = publisher === "guardian" ? params.get("from-date")! : params.get("begin_date")!;
    const from = Date.parse(publisher === "guardian" ? day : `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6)}`);
    const matches = dates.map((date, i) => ({ date, i })).filter(({ date }) => date.getTime() >= from);
    if (publisher === "guardian") {
      expect(params.get("order-by")).toBe("oldest");
      const results = matches.slice((page - 1) * 50, page * 50).map(({ date, i }) => ({
        webTitle: `Guardian cursor story ${i}`,
        webUrl: `https://www.theguardian.com/business/cursor-${i}`,
        webPublicationDate: date.toISOString(),
      }));
      return Response.json({ response: { status: "ok", pages: Math.ceil(matches.length / 50), results } });
    }
    expect(params.get("sort")).toBe("oldest");
    const docs = matches.slice(page * 10, (page + 1) * 10).map(({ date, i }) => ({
      headline: { main: `NYT cursor story ${i}` },
      web_url: `https://www.nytimes.com/cursor-${i}.html`,
      pub_date: date.toISOString(),
    }));
    return Response.json({ status: "OK", response: { docs, meta: { hits: matches.length, offset: page * 10 } } });
  };
  return { fetcher, asked };
}

const run = (publisher: string, fetcher: Fetcher, minutesAfterNow = 0, overrides: Record<string, string> = {}) =>
  ingestPublisher(db(), {
    publisher,
    settings: settings(overrides),
    fetch: fetcher,
    now: new Date(NOW.getTime() + minutesAfterNow * 60_000),
  });

/** The titles stored from the fake publisher, by their number. */
async function storedNumbers(prefix: string): Promise<number[]> {
  const { results } = await env.DB.prepare("select title from articles where title like ?")
    .bind(`${prefix} %`)
    .all<{ title: string }>();
  return results.map((row) => Number(row.title.slice(prefix.length + 1))).sort((a, b) => a - b);
}

const upTo = (count: number) => Array.from({ length: count }, (_, i) => i);

quietRunLogs();

describe("a run cut short", () => {
  beforeEach(async () => {
    await env.DB.batch(
      ["article_companies", "articles", "news_ingest_cursors"].map((table) => env.DB.prepare(`delete from ${table}`)),
    );
  });

  it("at the Guardian's 5 pages leaves the cursor at the last item read, and the next run stores the rest", async () => {
    // 300 matches every 30 minutes from the start of the 7-day lookback: 6 pages.
    const dates = times("2026-11-13T12:00:00Z", 300, 30);
    const { fetcher, asked } = fakeApi("guardian", dates);
    expect((await run("guardian", fetcher)).warnings).toEqual([
      "INFO: guardian: 250 fetched, 250 new, 0 updated, 0 unchanged",
      "WARNING: guardian: stopped after 5 pages of 6",
      "WARNING: guardian: run cut short: the cursor is at 2026-11-18T16:30:00.000Z, the last item read; the next run goes on from there",
    ]);
    expect(await getCursor(db(), "guardian")).toEqual(dates[249]);
    expect(await storedNumbers("Guardian cursor story")).toEqual(upTo(250));

    // The next run asks from the day of the last item read less the overlap: 84 matches, 34 of them stored already.
    expect((await run("guardian", fetcher, 30)).warnings).toEqual([
      "INFO: guardian: 84 fetched, 50 new, 0 updated, 34 unchanged",
    ]);
    expect(asked.at(-1)!.get("from-date")).toBe("2026-11-18");
    expect(await getCursor(db(), "guardian")).toEqual(new Date(NOW.getTime() + 30 * 60_000));
    expect(await storedNumbers("Guardian cursor story")).toEqual(upTo(300));
  });

  it("at the NYT's 2 pages leaves the cursor at the last item read, and the next run stores the rest", async () => {
    const dates = times("2026-11-13T12:00:00Z", 30, 240);
    const { fetcher, asked } = fakeApi("nyt", dates);
    expect((await run("nyt", fetcher)).warnings).toEqual([
      "INFO: nyt: 20 fetched, 20 new, 0 updated, 0 unchanged",
      "WARNING: nyt: stopped after 2 pages of 3",
      "WARNING: nyt: run cut short: the cursor is at 2026-11-16T16:00:00.000Z, the last item read; the next run goes on from there",
    ]);
    expect(await getCursor(db(), "nyt")).toEqual(dates[19]);
    expect((await run("nyt", fetcher, 30)).warnings).toEqual(["INFO: nyt: 15 fetched, 10 new, 0 updated, 5 unchanged"]);
    expect(asked.at(-1)!.get("begin_date")).toBe("20261116");
    expect(await storedNumbers("NYT cursor story")).toEqual(upTo(30));
  });

  it("by an NYT 429 on page 2 leaves the cursor where the next run picks up", async () => {
    const dates = times("2026-11-13T12:00:00Z", 15, 240);
    let limited = true;
    const { fetcher } = fakeApi("nyt", dates, (page) => (page === 1 && limited ? 429 : 200));
    expect((await run("nyt", fetcher)).warnings).toEqual([
      "INFO: nyt: 10 fetched, 10 new, 0 updated, 0 unchanged",
      "WARNING: nyt: rate limited after 1 page(s)",
      "WARNING: nyt: run cut short: the cursor is at 2026-11-15T00:00:00.000Z, the last item read; the next run goes on from there",
    ]);
    expect(await getCursor(db(), "nyt")).toEqual(dates[9]);
    limited = false;
    expect((await run("nyt", fetcher, 30)).warnings).toEqual(["INFO: nyt: 12 fetched, 5 new, 0 updated, 7 unchanged"]);
    expect(await storedNumbers("NYT cursor story")).toEqual(upTo(15));
    expect(await getCursor(db(), "nyt")).toEqual(new Date(NOW.getTime() + 30 * 60_000));
  });

  it("inside one day that holds more than the cap moves on to the next day, saying what it skipped", async () => {
    // With a 1-day lookback the run asks from 2026-11-19; 300 matches a minute apart all fall on that day, and the API
    // takes whole days: asking from there again would read the same 250 for ever.
    const dates = times("2026-11-19T13:00:00Z", 300, 1);
    const { fetcher } = fakeApi("guardian", dates);
    expect((await run("guardian", fetcher, 0, { NEWS_LOOKBACK_DAYS: "1" })).warnings).toEqual([
      "INFO: guardian: 250 fetched, 250 new, 0 updated, 0 unchanged",
      "WARNING: guardian: stopped after 5 pages of 6",
      "WARNING: guardian: more matches published on 2026-11-19 than a run reads; the rest of that day is skipped",
    ]);
    expect(await getCursor(db(), "guardian")).toEqual(new Date("2026-11-20T01:00:00Z"));
    expect(await storedNumbers("Guardian cursor story")).toEqual(upTo(250));
  });
});
