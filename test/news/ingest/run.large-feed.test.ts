// A feed as large as a run takes (500 items, links and pictures of the longest stored length) is stored whole, in one
// all-or-nothing batch: its rows are bound as several JSON lists, since D1 refuses one value over 2,000,000 bytes.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ingestPublisher } from "../../../src/news/ingest/run";
import { NewsSettings } from "../../../src/news/settings";
import { MAX_TITLE_LENGTH, MAX_URL_LENGTH } from "../../../src/news/store/text";
import { database } from "../../../src/shared/db";
import { NOW, quietRunLogs, recordedFetch } from "./ingest-fixtures";

const SITE = "https://large.example.com.au";
const FEED = `${SITE}/markets/rss`;

/** A URL under SITE of exactly MAX_URL_LENGTH characters. */
const longUrl = (path: string) => `${SITE}/${path}/`.padEnd(MAX_URL_LENGTH, "x");

/** The n-th title: MAX_TITLE_LENGTH characters, most of them of 2 UTF-8 bytes, naming BHP. */
const title = (n: number) => `BHP ${n} `.padEnd(MAX_TITLE_LENGTH, "é");

/** The n-th item, with the longest title and links stored. */
const item = (n: number) =>
  `<item><title>${title(n)}</title><link>${longUrl(`story/${n}`)}</link>` +
  `<media:thumbnail url="${longUrl(`picture/${n}`)}"/><pubDate>Fri, 20 Nov 2026 11:50:00 GMT</pubDate></item>`;

const FEED_BODY =
  `<rss xmlns:media="http://search.yahoo.com/mrss/"><channel>` +
  `${Array.from({ length: 500 }, (_, n) => item(n)).join("")}</channel></rss>`;

const ingest = (now: Date) =>
  ingestPublisher(database(env.DB), {
    publisher: `feed:${FEED}`,
    settings: NewsSettings.parse({ NEWS_FEEDS: FEED, NEWS_LOOKBACK_DAYS: "7" }),
    fetch: recordedFetch({ [FEED]: { body: FEED_BODY } }).fetcher,
    now,
  });

const stored = () =>
  env.DB.prepare(
    `select count(*) as articles, sum(length(cast(title as blob)) + length(url) + length(thumbnail)) as bytes,
       (select count(*) from article_companies join articles a on a.id = article_id
          where a.source = ?1 and ticker = 'BHP' and origin = 'text') as links
     from articles where source = ?1`,
  )
    .bind("large.example.com.au")
    .first<{ articles: number; bytes: number; links: number }>();

quietRunLogs();

describe("a run of a feed larger than one D1 value", () => {
  it("stores all 500 items and their links, and finds them unchanged on the next run", async () => {
    expect((await ingest(NOW)).warnings).toEqual([`INFO: feed:${FEED}: 500 fetched, 500 new, 0 updated, 0 unchanged`]);
    // Titles, links and pictures alone are over 2,000,000 bytes: one JSON parameter could not hold the rows.
    const titleBytes = Array.from({ length: 500 }, (_, n) => new TextEncoder().encode(title(n)).length);
    const bytes = titleBytes.reduce((sum, size) => sum + size, 0) + 500 * 2 * MAX_URL_LENGTH;
    expect(bytes).toBeGreaterThan(2_500_000);
    expect(await stored()).toEqual({
      articles: 500,
      bytes,
      links: 500,
    });

    const later = new Date(NOW.getTime() + 30 * 60_000);
    expect((await ingest(later)).warnings).toEqual([
      `INFO: feed:${FEED}: 500 fetched, 0 new, 0 updated, 500 unchanged`,
    ]);
    expect((await stored())?.articles).toBe(500);
  });
});
