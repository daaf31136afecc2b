// One publisher's ingestion run: which publishers are listed, what is stored and linked, cursors, updates and skips.
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { getCursor } from "../../../src/news/store/upsert";
import { CURSOR_OVERLAP_MS, ingestPublisher, listPublishers } from "../../../src/news/ingest/run";
import { NewsSettings } from "../../../src/news/settings";
import { md5Hex } from "../../../src/shared/bytes";
import { database } from "../../../src/shared/db";
import guardianSearch from "../fixtures/guardian-search.json?raw";
import { getJson, signUp } from "../../support/news-api";
import { ATOM_URL, NOW, quietRunLogs, recordedFetch, RSS_URL } from "./ingest-fixtures";

const settings = (overrides: Record<string, string> = {}) =>
  NewsSettings.parse({
    GUARDIAN_API_KEY: "guardian-test-key",
    NYT_API_KEY: "nyt-test-key",
    NEWS_FEEDS: `${RSS_URL}, ${ATOM_URL}`,
    ...overrides,
  });

const db = () => database(env.DB);

/** Ingests the one feed configured at `url`, answered with `rss`, at NOW. */
const ingestFeed = (url: string, rss: string) =>
  ingestPublisher(db(), {
    publisher: `feed:${url}`,
    settings: settings({ NEWS_FEEDS: url }),
    fetch: recordedFetch({ [url]: { body: rss } }).fetcher,
    now: NOW,
  });

quietRunLogs();

describe("listPublishers", () => {
  it("lists the Guardian, the NYT and each feed, skipping publishers without a key", () => {
    expect(listPublishers(settings())).toEqual(["guardian", "nyt", `feed:${RSS_URL}`, `feed:${ATOM_URL}`]);
    expect(listPublishers(settings({ GUARDIAN_API_KEY: "", NYT_API_KEY: "", NEWS_FEEDS: "" }))).toEqual([]);
    expect(listPublishers(settings({ NYT_API_KEY: "" }))).toEqual(["guardian", `feed:${RSS_URL}`, `feed:${ATOM_URL}`]);
  });

  it("refuses a NEWS_FEEDS entry that is not an http(s) URL", () => {
    expect(NewsSettings.safeParse({ NEWS_FEEDS: "https://a.example/rss, ftp://b.example/feed" }).success).toBe(false);
    expect(
      NewsSettings.safeParse({ NEWS_FEEDS: "https://a.example/rss https://b.example/atom" }).data?.NEWS_FEEDS,
    ).toEqual(["https://a.example/rss", "https://b.example/atom"]);
  });
});

describe("ingestPublisher", () => {
  let token: string;
  beforeAll(async () => {
    token = (await signUp("ingest-reader@example.com")).token;
  });

  const newsList = async (query = "") => {
    const response = await getJson(`/news?limit=100${query}`, token);
    return (await response.json()) as {
      title: string;
      source: string;
      companies: string[];
      abstract: string;
      thumbnail: string | null;
      publishedAt: string;
      fingerprint: string;
      url: string;
    }[];
  };

  // Each test starts from no articles and no cursors; the ones that need a first run make it with ingestAll.
  beforeEach(async () => {
    await env.DB.batch(
      ["article_companies", "articles", "news_ingest_cursors"].map((table) => env.DB.prepare(`delete from ${table}`)),
    );
  });

  /** A first run of every publisher at NOW on the recorded responses. */
  async function ingestAll() {
    const { fetcher } = recordedFetch();
    const outcomes = [];
    for (const publisher of ["guardian", "nyt", `feed:${RSS_URL}`, `feed:${ATOM_URL}`]) {
      outcomes.push(await ingestPublisher(db(), { publisher, settings: settings(), fetch: fetcher, now: NOW }));
    }
    return outcomes;
  }

  it("stores every publisher's articles once, linked to the companies they name, and moves each cursor", async () => {
    const outcomes = await ingestAll();
    expect(outcomes.map((outcome) => outcome.warnings)).toEqual([
      ["INFO: guardian: 3 fetched, 3 new, 0 updated, 0 unchanged"],
      ["INFO: nyt: 2 fetched, 2 new, 0 updated, 0 unchanged"],
      // The BHP story came through the Guardian API already: same title and source, same fingerprint.
      [`INFO: feed:${RSS_URL}: 2 fetched, 1 new, 0 updated, 1 unchanged`],
      [`INFO: feed:${ATOM_URL}: 2 fetched, 2 new, 0 updated, 0 unchanged`],
    ]);

    const stored = await newsList();
    expect(stored.map((article) => [article.source, article.title, article.companies])).toEqual([
      ["guardian", "Lithium miners rally as Pilbara Minerals restarts its Ngungaju plant", ["MIN", "PLS"]],
      ["guardian", "BHP lifts iron ore guidance as Chinese steel demand steadies", ["BHP"]],
      ["newsroom.example.com.au", "Macquarie half-year profit beats forecasts on commodities trading", ["MQG"]],
      ["nyt", "Rio Tinto and BHP Bet on Copper as Iron Ore Slows", ["BHP", "RIO"]],
      [
        "guardian",
        "Commonwealth Bank and Westpac pass on only part of the rate cut as mortgage war cools",
        ["CBA", "WBC"],
      ],
      ["nyt", "An Australian Gas Giant Faces a Climate Revolt From Its Shareholders", ["WDS"]],
      ["newsroom.example.com.au", "Woodside confirms first Scarborough LNG cargo & lifts 2027 output target", ["WDS"]],
      ["guardian", "Qantas ordered to pay $20m over flights it had already cancelled", ["QAN"]],
    ]);

    const bhp = stored[1];
    expect(bhp).toMatchObject({
      abstract:
        "The miner expects Pilbara shipments to rise in the second half, easing fears of a slowdown in its largest market",
      // The Guardian API's thumbnail came first and stays.
      thumbnail: "https://media.guim.co.uk/5f1d2c0a7b3e4f9a8c6d1e2f3a4b5c6d7e8f9a0b/0_0_4000_2400/500.jpg",
      publishedAt: "2026-11-19T23:41:05.000Z",
      fingerprint: await md5Hex("BHP lifts iron ore guidance as Chinese steel demand steadiesguardian"),
    });
    const banks = stored[4];
    expect(banks.abstract).toBe(
      "Australia’s two largest lenders keep 10 basis points of the Reserve Bank’s cut, drawing criticism from consumer groups & the treasurer",
    );
    const lithium = stored[0];
    expect(lithium.abstract).toMatch(
      /^Shares in lithium producers jumped on Friday after Pilbara Minerals said .* \.\.\.$/,
    );
    expect(lithium.abstract).not.toMatch(/[<>]/);
    expect(lithium.abstract.length).toBeLessThanOrEqual(256 + 4);

    for (const publisher of ["guardian", "nyt", `feed:${RSS_URL}`, `feed:${ATOM_URL}`]) {
      expect(await getCursor(db(), publisher)).toEqual(NOW);
    }
  });

  it("adds nothing on a second run and asks only for what is newer than the cursor", async () => {
    await ingestAll();
    const later = new Date(NOW.getTime() + 30 * 60_000);
    const { fetcher, urls } = recordedFetch();
    const before = (await newsList()).length;
    const guardian = await ingestPublisher(db(), {
      publisher: "guardian",
      settings: settings(),
      fetch: fetcher,
      now: later,
    });
    const nyt = await ingestPublisher(db(), { publisher: "nyt", settings: settings(), fetch: fetcher, now: later });
    const rss = await ingestPublisher(db(), {
      publisher: `feed:${RSS_URL}`,
      settings: settings(),
      fetch: fetcher,
      now: later,
    });
    expect([guardian.warnings, nyt.warnings, rss.warnings]).toEqual([
      ["INFO: guardian: 3 fetched, 0 new, 0 updated, 3 unchanged"],
      ["INFO: nyt: 2 fetched, 0 new, 0 updated, 2 unchanged"],
      // A feed is read back to NEWS_LOOKBACK_DAYS whatever its cursor (run.late-items.test.ts): its items again.
      [`INFO: feed:${RSS_URL}: 2 fetched, 0 new, 0 updated, 2 unchanged`],
    ]);
    expect(await newsList()).toHaveLength(before);
    const since = new Date(NOW.getTime() - CURSOR_OVERLAP_MS);
    expect(urls[0].searchParams.get("from-date")).toBe(since.toISOString().slice(0, 10));
    expect(urls[1].searchParams.get("begin_date")).toBe("20261120");
    expect(await getCursor(db(), "guardian")).toEqual(later);
  });

  it("stores a feed's items under the feed's own source, so that it neither rewrites nor forges another's", async () => {
    const guardian = { publisher: "guardian", settings: settings(), fetch: recordedFetch().fetcher, now: NOW };
    await ingestPublisher(db(), guardian);
    const before = await newsList();
    const spoofing = "https://feeds.spoof.example/feed.xml";
    const rss = `<rss><channel>
      <item><title>BHP lifts iron ore guidance as Chinese steel demand steadies</title>
        <link>https://www.theguardian.com/business/not-the-story</link>
        <description>Made up: ASX: CBA and ASX: WBC</description></item>
      <item><title>Qantas collapses into administration</title>
        <link>https://www.nytimes.com/2026/11/20/business/made-up.html</link></item>
    </channel></rss>`;
    const outcome = await ingestFeed(spoofing, rss);
    expect(outcome.warnings).toEqual([`INFO: feed:${spoofing}: 2 fetched, 2 new, 0 updated, 0 unchanged`]);
    const after = await newsList();
    expect(after.filter((article) => article.source === "guardian")).toEqual(before);
    const spoofed = after.filter((article) => article.source !== "guardian");
    expect(spoofed.map((article) => [article.source, article.title, article.url, article.companies]).sort()).toEqual([
      [
        "feeds.spoof.example",
        "BHP lifts iron ore guidance as Chinese steel demand steadies",
        "https://www.theguardian.com/business/not-the-story",
        ["BHP", "CBA", "WBC"],
      ],
      [
        "feeds.spoof.example",
        "Qantas collapses into administration",
        "https://www.nytimes.com/2026/11/20/business/made-up.html",
        ["QAN"],
      ],
    ]);
  });

  it("updates a story whose abstract the publisher changed, keeping its id and publishedAt", async () => {
    await ingestAll();
    const changed = JSON.parse(guardianSearch);
    changed.response.results[2].fields.trailText =
      "Corrected: the penalty is the largest the court has imposed on an airline";
    const { fetcher } = recordedFetch({ "https://content.guardianapis.com/search": { body: JSON.stringify(changed) } });
    const before = (await newsList()).find((article) => article.title.startsWith("Qantas"))!;
    const outcome = await ingestPublisher(db(), {
      publisher: "guardian",
      settings: settings(),
      fetch: fetcher,
      now: new Date(NOW.getTime() + 3_600_000),
    });
    expect(outcome.warnings).toEqual(["INFO: guardian: 3 fetched, 0 new, 1 updated, 2 unchanged"]);
    const after = (await newsList()).find((article) => article.title.startsWith("Qantas"))!;
    expect(after).toEqual({
      ...before,
      abstract: "Corrected: the penalty is the largest the court has imposed on an airline",
      companies: ["QAN"],
      updatedAt: "2026-11-20T13:00:00.000Z",
    });
    // The new abstract is searchable, the old one no longer.
    const found = await getJson("/news?q=largest%20penalty", token);
    expect(((await found.json()) as { title: string }[]).map((a) => a.title)).toEqual([before.title]);
    const gone = await getJson("/news?q=ghost%20flights", token);
    expect(await gone.json()).toEqual([]);
  });

  it("keeps the stored abstract, and the companies it names, when the story comes again without one", async () => {
    const guardianWith = (trailText: string) => {
      const search = JSON.parse(guardianSearch);
      search.response.results[0].fields.trailText = trailText;
      return recordedFetch({ "https://content.guardianapis.com/search": { body: JSON.stringify(search) } }).fetcher;
    };
    const run = (trailText: string, hours: number) =>
      ingestPublisher(db(), {
        publisher: "guardian",
        settings: settings(),
        fetch: guardianWith(trailText),
        now: new Date(NOW.getTime() + hours * 3_600_000),
      });
    await run("Rio Tinto follows with its own guidance", 0);
    const bhp = async () => (await newsList()).find((article) => article.title.startsWith("BHP"))!;
    const first = await bhp();
    expect([first.abstract, first.companies]).toEqual(["Rio Tinto follows with its own guidance", ["BHP", "RIO"]]);
    const outcome = await run("", 1);
    expect(outcome.warnings).toEqual(["INFO: guardian: 3 fetched, 0 new, 0 updated, 3 unchanged"]);
    expect(await bhp()).toEqual(first);
  });

  it("skips a publisher without a key, and a feed no longer listed, without fetching", async () => {
    const { fetcher, urls } = recordedFetch();
    const guardian = await ingestPublisher(db(), {
      publisher: "guardian",
      settings: settings({ GUARDIAN_API_KEY: "" }),
      fetch: fetcher,
      now: NOW,
    });
    expect(guardian.warnings).toEqual(["SKIPPED: guardian: GUARDIAN_API_KEY is not set"]);
    const feed = await ingestPublisher(db(), {
      publisher: "feed:https://elsewhere.example/rss",
      settings: settings(),
      fetch: fetcher,
      now: NOW,
    });
    expect(feed.warnings).toEqual([
      "SKIPPED: feed:https://elsewhere.example/rss: the feed is no longer listed in NEWS_FEEDS",
    ]);
    expect(urls).toEqual([]);
  });

  it("leaves the cursor where it was when the publisher fails", async () => {
    const { fetcher } = recordedFetch({
      "https://api.nytimes.com/svc/search/v2/articlesearch.json": { status: 503, body: "Service Unavailable" },
    });
    const cursor = await getCursor(db(), "nyt");
    await expect(
      ingestPublisher(db(), {
        publisher: "nyt",
        settings: settings(),
        fetch: fetcher,
        now: new Date(NOW.getTime() + 7_200_000),
      }),
    ).rejects.toThrow("nyt answered HTTP 503");
    expect(await getCursor(db(), "nyt")).toEqual(cursor);
  });

  it("stores items whose picture is not an http(s) URL without it", async () => {
    const long = `https://img.example.net/${"a".repeat(2048)}.jpg`;
    const rss = `<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>
      <item><title>Script picture story</title><link>https://pictures.example.net/1</link><pubDate>Fri, 20 Nov 2026 01:00:00 GMT</pubDate>
        <media:thumbnail url="javascript:alert(document.cookie)"/></item>
      <item><title>Data picture story</title><link>https://pictures.example.net/2</link><pubDate>Fri, 20 Nov 2026 01:00:00 GMT</pubDate>
        <enclosure url="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+" type="image/svg+xml" length="1"/></item>
      <item><title>FTP picture story</title><link>https://pictures.example.net/3</link><pubDate>Fri, 20 Nov 2026 01:00:00 GMT</pubDate>
        <media:content url="ftp://files.example.net/3.jpg" medium="image"/></item>
      <item><title>Long picture story</title><link>https://pictures.example.net/4</link><pubDate>Fri, 20 Nov 2026 01:00:00 GMT</pubDate>
        <media:thumbnail url="${long}"/></item>
      <item><title>Script first, image second story</title><link>https://pictures.example.net/5</link><pubDate>Fri, 20 Nov 2026 01:00:00 GMT</pubDate>
        <media:thumbnail url="javascript:alert(1)"/><media:content url="https://img.example.net/5.jpg" medium="image"/></item>
    </channel></rss>`;
    const url = "https://pictures.example.net/rss";
    const outcome = await ingestFeed(url, rss);
    expect(outcome.warnings).toEqual([`INFO: feed:${url}: 5 fetched, 5 new, 0 updated, 0 unchanged`]);
    const stored = await newsList("&sources=pictures.example.net&sort=title");
    expect(stored.map((article) => [article.title, article.thumbnail])).toEqual([
      ["Data picture story", null],
      ["FTP picture story", null],
      ["Long picture story", null],
      ["Script first, image second story", "https://img.example.net/5.jpg"],
      ["Script picture story", null],
    ]);
  });

  it("stores a Guardian result whose thumbnail is not an http(s) URL without it", async () => {
    const body = JSON.stringify({
      response: {
        status: "ok",
        pages: 1,
        results: [
          {
            webTitle: "Guardian script thumbnail story",
            webUrl: "https://www.theguardian.com/business/2026/nov/20/script-thumbnail",
            webPublicationDate: "2026-11-20T01:00:00Z",
            fields: { trailText: "x", thumbnail: "javascript:alert(1)" },
          },
        ],
      },
    });
    const { fetcher } = recordedFetch({ "https://content.guardianapis.com/search": { body } });
    await ingestPublisher(db(), {
      publisher: "guardian",
      settings: settings(),
      fetch: fetcher,
      now: new Date(NOW.getTime() + 10_800_000),
    });
    const [article] = (await newsList("&q=script%20thumbnail")).filter(
      (found) => found.title === "Guardian script thumbnail story",
    );
    expect(article).toMatchObject({ title: "Guardian script thumbnail story", thumbnail: null });
  });

  it("skips a malformed Guardian or NYT item, counting it, and stores the good ones of its page", async () => {
    const good = (n: number) => ({
      webTitle: `Malformed page good story ${n}`,
      webUrl: `https://www.theguardian.com/business/2026/nov/20/malformed-good-${n}`,
      webPublicationDate: "2026-11-20T01:00:00Z",
    });
    const guardianPage = {
      response: {
        status: "ok",
        pages: 1,
        results: [
          good(1),
          null,
          { webTitle: 42, webUrl: "https://www.theguardian.com/x" },
          { ...good(2), fields: { trailText: 7, thumbnail: ["not", "a", "url"] } },
        ],
      },
    };
    const nytPage = {
      status: "OK",
      response: {
        meta: { hits: 3 },
        docs: [
          {
            headline: { main: "Malformed page NYT story" },
            web_url: "https://www.nytimes.com/m.html",
            multimedia: [null],
          },
          {
            headline: { main: "Malformed image NYT story" },
            web_url: "https://www.nytimes.com/i.html",
            multimedia: [{ url: 5 }],
          },
          { headline: "not an object", web_url: "https://www.nytimes.com/h.html" },
        ],
      },
    };
    const { fetcher } = recordedFetch({
      "https://content.guardianapis.com/search": { body: JSON.stringify(guardianPage) },
      "https://api.nytimes.com/svc/search/v2/articlesearch.json": { body: JSON.stringify(nytPage) },
    });
    const run = (publisher: string) =>
      ingestPublisher(db(), { publisher, settings: settings(), fetch: fetcher, now: NOW });
    expect((await run("guardian")).warnings).toEqual([
      "INFO: guardian: 4 fetched, 2 new, 0 updated, 0 unchanged",
      "WARNING: guardian: 2 item(s) without a usable title or URL skipped",
    ]);
    expect((await run("nyt")).warnings).toEqual([
      "INFO: nyt: 3 fetched, 2 new, 0 updated, 0 unchanged",
      "WARNING: nyt: 1 item(s) without a usable title or URL skipped",
    ]);
    const stored = await newsList("&q=malformed&sort=title");
    expect(stored.map((article) => [article.title, article.abstract, article.thumbnail])).toEqual([
      ["Malformed image NYT story", "", null],
      ["Malformed page NYT story", "", null],
      ["Malformed page good story 1", "", null],
      ["Malformed page good story 2", "", null],
    ]);
    expect(await getCursor(db(), "guardian")).toEqual(NOW);
    expect(await getCursor(db(), "nyt")).toEqual(NOW);
  });

  it("dates an item dated ahead of the run at the run, so that it cannot stay at the top of every list", async () => {
    const rss = `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
      <item><title>From the future</title><link>https://ahead.example.org/a</link><pubDate>Sat, 01 Jan 2039 00:00:00 GMT</pubDate></item>
      <item><title>From the past</title><link>https://ahead.example.org/b</link><pubDate>Thu, 19 Nov 2026 01:00:00 GMT</pubDate></item>
    </channel></rss>`;
    await ingestFeed("https://ahead.example.org/rss", rss);
    const stored = await newsList("&sources=ahead.example.org");
    expect(stored.map((article) => [article.title, article.publishedAt])).toEqual([
      ["From the future", NOW.toISOString()],
      ["From the past", "2026-11-19T01:00:00.000Z"],
    ]);
  });

  it("skips items without a usable URL, or with a title over 500 characters, and says so", async () => {
    const rss = `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
      <item><title>No link here</title><description>x</description><pubDate>Fri, 20 Nov 2026 01:00:00 GMT</pubDate></item>
      <item><title>Bad scheme</title><link>javascript:alert(1)</link><pubDate>Fri, 20 Nov 2026 01:00:00 GMT</pubDate></item>
      <item><title>${"Too long ".repeat(56)}</title><link>https://news.example.org/long</link></item>
      <item><title>${"x".repeat(500)}</title><link>https://news.example.org/longest</link><pubDate>Fri, 20 Nov 2026 00:00:00 GMT</pubDate></item>
      <item><title>Kept: Telstra outage</title><link>https://news.example.org/telstra-outage</link><pubDate>Fri, 20 Nov 2026 01:00:00 GMT</pubDate></item>
    </channel></rss>`;
    const url = "https://news.example.org/rss";
    const outcome = await ingestFeed(url, rss);
    expect(outcome.warnings).toEqual([
      `INFO: feed:${url}: 5 fetched, 2 new, 0 updated, 0 unchanged`,
      `WARNING: feed:${url}: 3 item(s) without a usable title or URL skipped`,
    ]);
    const response = await getJson("/news?sources=news.example.org", token);
    expect(
      ((await response.json()) as { title: string; companies: string[] }[]).map((a) => [a.title, a.companies]),
    ).toEqual([
      ["Kept: Telstra outage", ["TLS"]],
      ["x".repeat(500), []],
    ]);
  });
});
