// The Guardian Content API adapter (GET https://content.guardianapis.com/search): articles that mention the
// companies, published since the last run, oldest first, with their standfirst (trailText) and thumbnail.
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

export const GUARDIAN_SEARCH_URL = "https://content.guardianapis.com/search";
const PAGE_SIZE = 50;
/**
 * At most this many pages per run; every 30 minutes that is far more than the Guardian publishes about them. A run
 * that reaches it (a first run, or a catch-up after an outage) leaves the rest to the next run.
 */
const MAX_PAGES = 5;

/** A result, read leniently (see optionalText): null, or a field of the wrong type, leaves that part missing. */
const GuardianResult = z
  .object({
    webTitle: optionalText,
    webUrl: optionalText,
    webPublicationDate: optionalText,
    fields: z.object({ trailText: optionalText, thumbnail: optionalText }).optional().catch(undefined),
  })
  .catch({});

interface GuardianResponse {
  response?: { status?: string; currentPage?: number; pages?: unknown; results?: unknown[]; message?: string };
}

/** Guardian's q syntax: quoted phrases joined by OR. */
export const orQuery = (phrases: string[]) => phrases.map((phrase) => `"${phrase.replaceAll('"', "")}"`).join(" OR ");

export function guardianSearchUrl(input: { apiKey: string; keywords: string[]; since: Date; page: number }): string {
  const params = new URLSearchParams({
    q: orQuery(input.keywords),
    "from-date": input.since.toISOString().slice(0, 10),
    "use-date": "published",
    // Oldest first: a run that stops at MAX_PAGES has read everything up to its last item, and the next goes on from it.
    "order-by": "oldest",
    "show-fields": "trailText,thumbnail",
    "page-size": String(PAGE_SIZE),
    page: String(input.page),
    "api-key": input.apiKey,
  });
  return `${GUARDIAN_SEARCH_URL}?${params}`;
}

export async function fetchGuardian(input: {
  fetch: Fetcher;
  apiKey: string;
  keywords: string[];
  since: Date;
}): Promise<AdapterResult> {
  const items: PublisherItem[] = [];
  const warnings: string[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const body = (await fetchJson(input.fetch, "guardian", guardianSearchUrl({ ...input, page }))) as GuardianResponse;
    const response = body.response;
    if (!response || response.status !== "ok" || !Array.isArray(response.results)) {
      throw new PublisherError(`guardian answered status ${quoted(JSON.stringify(response?.status ?? null))}`);
    }
    for (const raw of response.results) {
      // An item without a title or URL is passed on as such: the run skips it and counts it in its warnings.
      const result = GuardianResult.parse(raw);
      items.push({
        title: result.webTitle ?? "",
        url: result.webUrl ?? "",
        abstractHtml: result.fields?.trailText ?? "",
        thumbnail: result.fields?.thumbnail,
        publishedAt: parseDate(result.webPublicationDate),
        source: result.webUrl && URL.canParse(result.webUrl) ? sourceOfUrl(result.webUrl) : "guardian",
      });
    }
    const pages = typeof response.pages === "number" ? response.pages : 1;
    if (page >= pages) break;
    if (page === MAX_PAGES) {
      warnings.push(`WARNING: guardian: stopped after ${MAX_PAGES} pages of ${pages}`);
      return { items, warnings, stoppedEarly: "page-cap" };
    }
  }
  return { items, warnings };
}
