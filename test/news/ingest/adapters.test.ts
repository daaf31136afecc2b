// The publisher adapters on recorded responses: the Guardian and NYT APIs (paging, errors) and RSS and Atom feeds.
import { describe, expect, it } from "vitest";
import { fetchFeed, parseFeed } from "../../../src/news/ingest/feed";
import { fetchGuardian } from "../../../src/news/ingest/guardian";
import { fetchNyt, nytThumbnail } from "../../../src/news/ingest/nyt";
import type { Fetcher } from "../../../src/news/ingest/types";
import atomFeed from "../fixtures/newsroom-atom.xml?raw";
import guardianRss from "../fixtures/guardian-business-rss.xml?raw";
import { ATOM_URL, NOW, quietRunLogs, recordedFetch, RSS_URL } from "./ingest-fixtures";

quietRunLogs();

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
      "order-by": "oldest",
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
      sort: "oldest",
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
