// NEWS_DEMO: ingestion from a bundled sample instead of the publishers, so that the list and search work offline.
// The sample is what the publishers answer (a Guardian Content API page, an NYT Article Search page and an RSS feed,
// under sample/, texts written for this project) and goes through the real path: the same adapters parse it, the
// run links companies, upserts by fingerprint and indexes the full text. Only the fetch is answered from the bundle.
import { fetchFeed } from "./feed";
import { fetchGuardian, GUARDIAN_SEARCH_URL } from "./guardian";
import { fetchNyt, NYT_SEARCH_URL } from "./nyt";
import guardianSearch from "./sample/guardian-search.json";
import nytArticleSearch from "./sample/nyt-articlesearch.json";
import { SAMPLE_FEED_URL, newsroomFeed } from "./sample/newsroom-rss";
import type { AdapterResult, Fetcher } from "./types";

/** One queued run each, as the real publishers have. */
export const SAMPLE_PUBLISHERS = ["sample:guardian", "sample:nyt", "sample:feed"] as const;

const answers: [prefix: string, contentType: string, body: () => string][] = [
  [GUARDIAN_SEARCH_URL, "application/json", () => JSON.stringify(guardianSearch)],
  [NYT_SEARCH_URL, "application/json", () => JSON.stringify(nytArticleSearch)],
  [SAMPLE_FEED_URL, "application/rss+xml; charset=UTF-8", () => newsroomFeed],
];

/** A fetch that answers the publishers' URLs from the bundle and refuses any other: the sample never goes online. */
export const sampleFetch: Fetcher = async (url) => {
  const answer = answers.find(([prefix]) => url.startsWith(prefix));
  if (!answer) throw new Error(`the news sample has no answer for ${new URL(url).origin}`);
  return new Response(answer[2](), { headers: { "content-type": answer[1] } });
};

/**
 * The sample publisher's items. Every run reads all of it, whatever the cursor says (its dates are fixed, and a
 * feed's items older than the lookback would be left out): the upsert by fingerprint makes a second run a no-op.
 */
export function fetchSample(publisher: string, keywords: string[], now: Date): Promise<AdapterResult> | string {
  const since = new Date(0);
  const input = { fetch: sampleFetch, apiKey: "sample", keywords, since, now };
  if (publisher === "sample:guardian") return fetchGuardian(input);
  if (publisher === "sample:nyt") return fetchNyt(input);
  if (publisher === "sample:feed") return fetchFeed({ ...input, url: SAMPLE_FEED_URL });
  return "unknown sample publisher";
}
