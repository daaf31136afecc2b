// A feed item that enters its feed hours after the date it carries (a date without a time, a wrong zone, late
// indexing) is still stored: feeds are read back to NEWS_LOOKBACK_DAYS, not to the publisher's cursor.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ingestPublisher } from "../../../src/news/ingest/run";
import { NewsSettings } from "../../../src/news/settings";
import { database } from "../../../src/shared/db";
import { NOW, quietRunLogs, recordedFetch } from "./ingest-fixtures";

const FEED = "https://late.example.com.au/markets/rss";

const item = (title: string, date: string) =>
  `<item><title>${title}</title><link>https://late.example.com.au/${encodeURIComponent(title)}</link>` +
  `<pubDate>${date}</pubDate></item>`;

/** A run of the feed at `now`, answered with these items. */
const ingest = (now: Date, ...items: string[]) =>
  ingestPublisher(database(env.DB), {
    publisher: `feed:${FEED}`,
    settings: NewsSettings.parse({ NEWS_FEEDS: FEED, NEWS_LOOKBACK_DAYS: "7" }),
    fetch: recordedFetch({ [FEED]: { body: `<rss><channel>${items.join("")}</channel></rss>` } }).fetcher,
    now,
  });

const storedTitles = async () =>
  (
    await env.DB.prepare("select title from articles where source = ? order by title")
      .bind("late.example.com.au")
      .all<{ title: string }>()
  ).results.map((row) => row.title);

quietRunLogs();

describe("a feed read after its cursor moved", () => {
  it("stores an item dated well before the cursor that entered the feed since, and one older than the lookback not", async () => {
    const first = item("Fortescue ships a record quarter", "Fri, 20 Nov 2026 11:50:00 GMT");
    expect((await ingest(NOW, first)).warnings).toEqual([
      `INFO: feed:${FEED}: 1 fetched, 1 new, 0 updated, 0 unchanged`,
    ]);
    // Half an hour later the feed lists an item dated by day only (midnight in Sydney), 23 hours before the run, and
    // one from before NEWS_LOOKBACK_DAYS.
    const late = item("Woodside sets its budget", "Fri, 20 Nov 2026 00:00:00 +1100");
    const stale = item("Santos reports a year ago", "Wed, 12 Nov 2026 11:00:00 GMT");
    const later = new Date(NOW.getTime() + 30 * 60_000);
    expect((await ingest(later, late, first, stale)).warnings).toEqual([
      `INFO: feed:${FEED}: 2 fetched, 1 new, 0 updated, 1 unchanged`,
    ]);
    expect(await storedTitles()).toEqual(["Fortescue ships a record quarter", "Woodside sets its budget"]);
  });
});
