// The New York Times Article Search API v2 adapter (GET https://api.nytimes.com/svc/search/v2/articlesearch.json):
// articles that mention the companies, published since the last run, oldest first.
import { z } from "../../shared/zod";
import {
  fetchJson,
  optionalText,
  parseDate,
  PublisherError,
  quoted,
  sourceOfUrl,
  type AdapterResult,
  type Fetcher,
  type PublisherItem,
} from "./types";
import { orQuery } from "./guardian";

export const NYT_SEARCH_URL = "https://api.nytimes.com/svc/search/v2/articlesearch.json";
/** The API answers 10 documents per page. */
const PAGE_SIZE = 10;
/** NYT allows 5 requests a minute: two pages per run stay well inside that with three runs' retries. */
const MAX_PAGES = 2;
const IMAGE_ORIGIN = "https://static01.nyt.com/";

/** An image, read leniently (see optionalText): null, or a url that is not a string, gives no thumbnail. */
const NytImage = z.object({ url: optionalText, subtype: optionalText });

/** A document, read leniently (see optionalText): null, or a field of the wrong type, leaves that part missing. */
const NytDoc = z
  .object({
    web_url: optionalText,
    abstract: optionalText,
    snippet: optionalText,
    lead_paragraph: optionalText,
    pub_date: optionalText,
    headline: z.object({ main: optionalText }).optional().catch(undefined),
    /** An object {default, thumbnail} since 2025; a list of images with relative URLs before. */
    multimedia: z
      .union([
        z.array(NytImage.catch({})),
        z.object({ default: NytImage.optional().catch(undefined), thumbnail: NytImage.optional().catch(undefined) }),
      ])
      .nullish()
      .catch(undefined),
  })
  .catch({});
type NytDoc = z.output<typeof NytDoc>;

interface NytResponse {
  status?: string;
  /** The paging node is "meta" (and "metadata" in some newer answers). */
  response?: {
    docs?: unknown[];
    meta?: { hits?: number; offset?: number };
    metadata?: { hits?: number; offset?: number };
  };
}

const yyyymmdd = (date: Date) => date.toISOString().slice(0, 10).replaceAll("-", "");

export function nytSearchUrl(input: {
  apiKey: string;
  keywords: string[];
  since: Date;
  now: Date;
  page: number;
}): string {
  const params = new URLSearchParams({
    q: orQuery(input.keywords),
    begin_date: yyyymmdd(input.since),
    end_date: yyyymmdd(input.now),
    // Oldest first: a run cut short has read everything up to its last item, and the next goes on from it.
    sort: "oldest",
    page: String(input.page),
    "api-key": input.apiKey,
  });
  return `${NYT_SEARCH_URL}?${params}`;
}

/** The thumbnail of either multimedia shape, as an absolute URL. */
export function nytThumbnail(multimedia: NytDoc["multimedia"]): string | undefined {
  if (!multimedia) return undefined;
  const image = Array.isArray(multimedia)
    ? (multimedia.find((item) => item.subtype === "thumbnail") ??
      multimedia.find((item) => item.subtype === "xlarge") ??
      multimedia[0])
    : (multimedia.thumbnail ?? multimedia.default);
  if (!image?.url) return undefined;
  return /^https?:\/\//.test(image.url) ? image.url : IMAGE_ORIGIN + image.url.replace(/^\//, "");
}

export async function fetchNyt(input: {
  fetch: Fetcher;
  apiKey: string;
  keywords: string[];
  since: Date;
  now: Date;
}): Promise<AdapterResult> {
  const items: PublisherItem[] = [];
  const warnings: string[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    let body: NytResponse;
    try {
      body = (await fetchJson(input.fetch, "nyt", nytSearchUrl({ ...input, page }))) as NytResponse;
    } catch (error) {
      // A rate limit on a later page keeps what the first pages brought; the next run continues from there.
      if (page > 0 && error instanceof PublisherError && /HTTP 429/.test(error.message)) {
        warnings.push(`WARNING: nyt: rate limited after ${page} page(s)`);
        return { items, warnings, stoppedEarly: "rate-limited" };
      }
      throw error;
    }
    if (body.status !== "OK" || !Array.isArray(body.response?.docs)) {
      throw new PublisherError(`nyt answered status ${quoted(JSON.stringify(body.status ?? null))}`);
    }
    const docs = body.response.docs;
    for (const raw of docs) {
      // An item without a title or URL is passed on as such: the run skips it and counts it in its warnings.
      const doc = NytDoc.parse(raw);
      items.push({
        title: doc.headline?.main ?? "",
        url: doc.web_url ?? "",
        abstractHtml: doc.abstract || doc.snippet || doc.lead_paragraph || "",
        thumbnail: nytThumbnail(doc.multimedia),
        publishedAt: parseDate(doc.pub_date),
        source: doc.web_url && URL.canParse(doc.web_url) ? sourceOfUrl(doc.web_url) : "nyt",
      });
    }
    const hits = (body.response.meta ?? body.response.metadata)?.hits ?? 0;
    if (docs.length < PAGE_SIZE || (page + 1) * PAGE_SIZE >= hits) break;
    if (page + 1 === MAX_PAGES) {
      warnings.push(`WARNING: nyt: stopped after ${MAX_PAGES} pages of ${Math.ceil(hits / PAGE_SIZE)}`);
      return { items, warnings, stoppedEarly: "page-cap" };
    }
  }
  return { items, warnings };
}
