// News ingestion on recorded publisher responses: the Guardian, NYT and feed adapters, and one publisher's run.
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { getCursor } from "../../../src/news/store/upsert";
import { fetchFeed, parseFeed } from "../../../src/news/ingest/feed";
import { fetchGuardian } from "../../../src/news/ingest/guardian";
import { fetchNyt, nytThumbnail } from "../../../src/news/ingest/nyt";
import { CURSOR_OVERLAP_MS, ingestPublisher, listPublishers } from "../../../src/news/ingest/run";
import type { Fetcher } from "../../../src/news/ingest/types";
import { NewsSettings } from "../../../src/news/settings";
import { md5Hex } from "../../../src/shared/bytes";
import { database } from "../../../src/shared/db";
import atomFeed from "../fixtures/newsroom-atom.xml?raw";
import guardianSearch from "../fixtures/guardian-search.json?raw";
import guardianRss from "../fixtures/guardian-business-rss.xml?raw";
import nytSearch from "../fixtures/nyt-articlesearch.json?raw";
import { getJson, signUp } from "../../support/news-api";

const NOW = new Date("2026-11-20T12:00:00Z");
const RSS_URL = "https://www.theguardian.com/business/rss";
const ATOM_URL = "https://newsroom.example.com.au/markets/atom.xml";

const settings = (overrides: Record<string, string> = {}) =>
  NewsSettings.parse({
    GUARDIAN_API_KEY: "guardian-test-key",
    NYT_API_KEY: "nyt-test-key",
    NEWS_FEEDS: `${RSS_URL}, ${ATOM_URL}`,
    ...overrides,
  });

/** A fetch that answers from the recorded responses and remembers what was asked. */
function recordedFetch(answers: Record<string, { body: string; status?: number }> = {}) {
  const urls: URL[] = [];
  const defaults: Record<string, { body: string; status?: number }> = {
    "https://content.guardianapis.com/search": { body: guardianSearch },
    "https://api.nytimes.com/svc/search/v2/articlesearch.json": { body: nytSearch },
    [RSS_URL]: { body: guardianRss },
    [ATOM_URL]: { body: atomFeed },
  };
  const routes = { ...defaults, ...answers };
  const fetcher: Fetcher = async (text) => {
    const url = new URL(text);
    urls.push(url);
    const key = Object.keys(routes).find((prefix) => `${url.origin}${url.pathname}` === prefix);
    if (!key) throw new TypeError(`unexpected fetch to ${url.origin}${url.pathname}`);
    return new Response(routes[key].body, { status: routes[key].status ?? 200 });
  };
  return { fetcher, urls };
}

const db = () => database(env.DB);

/** Ingests the one feed configured at `url`, answered with `rss`, at NOW. */
const ingestFeed = (url: string, rss: string) =>
  ingestPublisher(db(), {
    publisher: `feed:${url}`,
    settings: settings({ NEWS_FEEDS: url }),
    fetch: recordedFetch({ [url]: { body: rss } }).fetcher,
    now: NOW,
  });

beforeEach(() => {
  // Each run logs what it did; keep the test output to the results.
  vi.spyOn(console, "log").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("publisher adapters on recorded responses", () => {
  it("reads The Guardian Content API /search response", async () => {
    const { fetcher, urls } = recordedFetch();
    const result = await fetchGuardian({
      fetch: fetcher,
      apiKey: "k",
      keywords: ["BHP", "Commonwealth Bank"],
      since: new Date("2026-11-13T12:00:00Z"),
    });
    expect(result.warnings).toEqual([]);
    expect(result.items).toEqual([
      {
        title: "BHP lifts iron ore guidance as Chinese steel demand steadies",
        url: "https://www.theguardian.com/business/2026/nov/19/bhp-lifts-iron-ore-guidance-chinese-steel-demand",
        abstractHtml:
          "<p>The miner expects Pilbara shipments to rise in the second half, easing fears of a slowdown in its largest market</p>",
        thumbnail: "https://media.guim.co.uk/5f1d2c0a7b3e4f9a8c6d1e2f3a4b5c6d7e8f9a0b/0_0_4000_2400/500.jpg",
        publishedAt: new Date("2026-11-19T23:41:05Z"),
        source: "guardian",
      },
      expect.objectContaining({
        title: "Commonwealth Bank and Westpac pass on only part of the rate cut as mortgage war cools",
        source: "guardian",
      }),
      expect.objectContaining({
        title: "Qantas ordered to pay $20m over flights it had already cancelled",
        thumbnail: undefined,
      }),
    ]);
    expect(urls).toHaveLength(1);
    expect(Object.fromEntries(urls[0].searchParams)).toEqual({
      q: '"BHP" OR "Commonwealth Bank"',
      "from-date": "2026-11-13",
      "use-date": "published",
      "order-by": "newest",
      "show-fields": "trailText,thumbnail",
      "page-size": "50",
      page: "1",
      "api-key": "k",
    });
  });

  it("follows the Guardian's pages", async () => {
    const page = (n: number) => ({
      response: {
        status: "ok",
        currentPage: n,
        pages: 2,
        results: [
          {
            webTitle: `Story ${n}`,
            webUrl: `https://www.theguardian.com/${n}`,
            webPublicationDate: "2026-11-19T00:00:00Z",
          },
        ],
      },
    });
    const urls: string[] = [];
    const fetcher: Fetcher = async (url) => {
      urls.push(url);
      return Response.json(page(Number(new URL(url).searchParams.get("page"))));
    };
    const result = await fetchGuardian({ fetch: fetcher, apiKey: "k", keywords: ["BHP"], since: NOW });
    expect(result.items.map((item) => item.title)).toEqual(["Story 1", "Story 2"]);
    expect(urls.map((url) => new URL(url).searchParams.get("page"))).toEqual(["1", "2"]);
  });

  it("fails on an HTTP error without putting the key in the message", async () => {
    const { fetcher } = recordedFetch({
      "https://content.guardianapis.com/search": { status: 401, body: '{"message":"Unauthorized"}' },
    });
    await expect(
      fetchGuardian({ fetch: fetcher, apiKey: "secret-key", keywords: ["BHP"], since: NOW }),
    ).rejects.toThrow(/^guardian answered HTTP 401$/);
  });

  it("reads the NYT Article Search v2 response", async () => {
    const { fetcher, urls } = recordedFetch();
    const result = await fetchNyt({
      fetch: fetcher,
      apiKey: "k",
      keywords: ["Rio Tinto"],
      since: new Date("2026-11-13T12:00:00Z"),
      now: NOW,
    });
    expect(result.items).toEqual([
      {
        title: "Rio Tinto and BHP Bet on Copper as Iron Ore Slows",
        url: "https://www.nytimes.com/2026/11/19/business/rio-tinto-bhp-copper-iron-ore.html",
        abstractHtml:
          "Rio Tinto and BHP are steering billions toward copper as demand for iron ore from Chinese steel mills levels off.",
        thumbnail:
          "https://static01.nyt.com/images/2026/11/19/business/19mining-copper/19mining-copper-thumbStandard.jpg",
        publishedAt: new Date("2026-11-19T08:30:12Z"),
        source: "nyt",
      },
      expect.objectContaining({
        title: "An Australian Gas Giant Faces a Climate Revolt From Its Shareholders",
        thumbnail: undefined,
        source: "nyt",
      }),
    ]);
    // Two documents of two hits: no second page is asked for.
    expect(urls).toHaveLength(1);
    expect(Object.fromEntries(urls[0].searchParams)).toEqual({
      q: '"Rio Tinto"',
      begin_date: "20261113",
      end_date: "20261120",
      sort: "newest",
      page: "0",
      "api-key": "k",
    });
  });

  it("reads both shapes of NYT multimedia", () => {
    expect(
      nytThumbnail({
        default: { url: "https://static01.nyt.com/a-large.jpg" },
        thumbnail: { url: "https://static01.nyt.com/a-thumb.jpg" },
      }),
    ).toBe("https://static01.nyt.com/a-thumb.jpg");
    expect(nytThumbnail([{ subtype: "xlarge", url: "images/b.jpg" }])).toBe("https://static01.nyt.com/images/b.jpg");
    expect(nytThumbnail([])).toBeUndefined();
    expect(nytThumbnail(null)).toBeUndefined();
  });

  it("keeps the first NYT page when the second is rate limited", async () => {
    const docs = Array.from({ length: 10 }, (_, i) => ({
      web_url: `https://www.nytimes.com/${i}.html`,
      headline: { main: `Doc ${i}` },
      pub_date: "2026-11-19T00:00:00+0000",
    }));
    const fetcher: Fetcher = async (url) =>
      new URL(url).searchParams.get("page") === "0"
        ? Response.json({ status: "OK", response: { docs, meta: { hits: 25, offset: 0 } } })
        : new Response('{"fault":{"faultstring":"Rate limit quota violation"}}', { status: 429 });
    const result = await fetchNyt({ fetch: fetcher, apiKey: "k", keywords: ["BHP"], since: NOW, now: NOW });
    expect(result.items).toHaveLength(10);
    expect(result.warnings).toEqual(["WARNING: nyt: rate limited after 1 page(s)"]);
  });

  it("reads an RSS 2.0 feed, leaving out items older than the cursor", async () => {
    const { fetcher } = recordedFetch();
    const result = await fetchFeed({ fetch: fetcher, url: RSS_URL, since: new Date("2026-11-13T12:00:00Z") });
    expect(result.items.map((item) => item.title)).toEqual([
      "Lithium miners rally as Pilbara Minerals restarts its Ngungaju plant",
      "BHP lifts iron ore guidance as Chinese steel demand steadies",
    ]);
    expect(result.items[0]).toMatchObject({
      url: "https://www.theguardian.com/business/2026/nov/20/lithium-miners-rally-pilbara-minerals-restarts-ngungaju",
      thumbnail: expect.stringMatching(/^https:\/\/i\.guim\.co\.uk\/img\/media\/.+width=140&quality=85/),
      publishedAt: new Date("2026-11-20T02:00:00Z"),
      source: "guardian",
    });
    expect(parseFeed(guardianRss, RSS_URL)).toHaveLength(3);
    expect(parseFeed("<rss><channel><item><title>No link</title></item></channel></rss>", RSS_URL)).toEqual([
      { title: "No link", url: "", abstractHtml: "", thumbnail: undefined, publishedAt: undefined, source: "guardian" },
    ]);
  });

  it("reads an Atom feed: relative links, HTML titles, summaries and media thumbnails", async () => {
    const items = parseFeed(atomFeed, ATOM_URL);
    expect(items).toEqual([
      {
        title: "Woodside confirms first Scarborough LNG cargo &amp; lifts 2027 output target",
        url: "https://newsroom.example.com.au/markets/2026/11/woodside-scarborough-first-cargo/",
        abstractHtml:
          "<p>Woodside Energy (ASX:WDS) said the first cargo left the Pluto Train 2 facility on Wednesday night.</p>",
        thumbnail: "https://newsroom.example.com.au/images/2026/11/scarborough-thumb.jpg",
        publishedAt: new Date("2026-11-18T10:00:00Z"),
        source: "newsroom.example.com.au",
      },
      {
        title: "Macquarie half-year profit beats forecasts on commodities trading",
        url: "https://newsroom.example.com.au/markets/2026/11/macquarie-half-year-result/",
        abstractHtml:
          "Macquarie Group (MQG.AX) reported net profit of $2.1 billion for the six months to September, ahead of analyst estimates.",
        thumbnail: undefined,
        publishedAt: new Date("2026-11-19T22:30:00Z"),
        source: "newsroom.example.com.au",
      },
    ]);
  });

  it("refuses documents that are not feeds", () => {
    expect(() => parseFeed("<html><body>Not a feed</body></html>", ATOM_URL)).toThrow(
      `feed ${ATOM_URL} is neither RSS 2.0 nor Atom`,
    );
    expect(() => parseFeed("<rss><channel><item></rss>", ATOM_URL)).toThrow(/is not well-formed XML/);
  });
});

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
      // Every item of the feed is older than the cursor (minus the overlap): nothing to store.
      [`INFO: feed:${RSS_URL}: 0 fetched, 0 new, 0 updated, 0 unchanged`],
    ]);
    expect(await newsList()).toHaveLength(before);
    const since = new Date(NOW.getTime() - CURSOR_OVERLAP_MS);
    expect(urls[0].searchParams.get("from-date")).toBe(since.toISOString().slice(0, 10));
    expect(urls[1].searchParams.get("begin_date")).toBe("20261120");
    expect(await getCursor(db(), "guardian")).toEqual(later);
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

  it("skips items without a usable URL and says so", async () => {
    const rss = `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
      <item><title>No link here</title><description>x</description><pubDate>Fri, 20 Nov 2026 01:00:00 GMT</pubDate></item>
      <item><title>Bad scheme</title><link>javascript:alert(1)</link><pubDate>Fri, 20 Nov 2026 01:00:00 GMT</pubDate></item>
      <item><title>Kept: Telstra outage</title><link>https://news.example.org/telstra-outage</link><pubDate>Fri, 20 Nov 2026 01:00:00 GMT</pubDate></item>
    </channel></rss>`;
    const url = "https://news.example.org/rss";
    const outcome = await ingestFeed(url, rss);
    expect(outcome.warnings).toEqual([
      `INFO: feed:${url}: 3 fetched, 1 new, 0 updated, 0 unchanged`,
      `WARNING: feed:${url}: 2 item(s) without a usable title or URL skipped`,
    ]);
    const response = await getJson("/news?sources=news.example.org", token);
    expect(
      ((await response.json()) as { title: string; companies: string[] }[]).map((a) => [a.title, a.companies]),
    ).toEqual([["Kept: Telstra outage", ["TLS"]]]);
  });
});
