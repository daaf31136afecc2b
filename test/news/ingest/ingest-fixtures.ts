// The recorded publisher responses the ingestion suites fetch from, and the quiet logs their runs need.
import { afterEach, beforeEach, vi } from "vitest";
import type { Fetcher } from "../../../src/news/ingest/types";
import atomFeed from "../fixtures/newsroom-atom.xml?raw";
import guardianSearch from "../fixtures/guardian-search.json?raw";
import guardianRss from "../fixtures/guardian-business-rss.xml?raw";
import nytSearch from "../fixtures/nyt-articlesearch.json?raw";

export const NOW = new Date("2026-11-20T12:00:00Z");
export const RSS_URL = "https://www.theguardian.com/business/rss";
export const ATOM_URL = "https://newsroom.example.com.au/markets/atom.xml";

/** A fetch that answers from the recorded responses and remembers what was asked. */
export function recordedFetch(answers: Record<string, { body: string; status?: number }> = {}) {
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

/** Registers, for every test of the file, a silenced console.log and the mocks restored after each. */
export function quietRunLogs() {
  beforeEach(() => {
    // Each run logs what it did; keep the test output to the results.
    vi.spyOn(console, "log").mockImplementation(() => {});
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });
}
