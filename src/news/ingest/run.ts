// One ingestion run for one publisher (a queue message each, so that one publisher's failure never blocks the
// others): fetch what is new since its last run, normalise, link companies, upsert by fingerprint, move its cursor
// (to the run's start, or as far as the run read when it was cut short).
import type { Database } from "../../shared/db";
import { logInfo } from "../../shared/log";
import { getCursor, upsertArticles, type IncomingArticle } from "../store/upsert";
import { companyMatcher, listCompanies, type Company } from "../store/companies";
import type { NewsSettings } from "../settings";
import { articleFingerprint, htmlToText, httpUrl, makeAbstract, MAX_TITLE_LENGTH } from "../store/text";
import { fetchFeed } from "./feed";
import { fetchGuardian } from "./guardian";
import { fetchNyt } from "./nyt";
import { fetchSample, SAMPLE_PUBLISHERS } from "./sample";
import type { AdapterResult, Fetcher, PublisherItem } from "./types";

/** "guardian", "nyt", or "feed:<url>" for each URL of NEWS_FEEDS; "sample:<format>" with NEWS_DEMO. */
export type PublisherId = string;

/**
 * Publishers index late and clocks differ: each run reaches back this far before the previous run's end.
 * The overlap costs nothing but a few unchanged upserts.
 */
export const CURSOR_OVERLAP_MS = 60 * 60 * 1000;

const FEED_PREFIX = "feed:";
const SAMPLE_PREFIX = "sample:";

/**
 * The publishers to ingest from with these settings; those without a key are skipped with a log line. With NEWS_DEMO,
 * the sample's publishers instead of any.
 */
export function listPublishers(settings: NewsSettings): PublisherId[] {
  if (settings.NEWS_DEMO) {
    logInfo("news: NEWS_DEMO is true: ingesting the bundled sample instead of the publishers");
    return [...SAMPLE_PUBLISHERS];
  }
  const publishers: PublisherId[] = [];
  for (const [publisher, key, name] of [
    ["guardian", settings.GUARDIAN_API_KEY, "GUARDIAN_API_KEY"],
    ["nyt", settings.NYT_API_KEY, "NYT_API_KEY"],
  ] as const) {
    if (key) publishers.push(publisher);
    else logInfo(`news: skipping publisher ${publisher}: ${name} is not set`, { publisher });
  }
  for (const url of settings.NEWS_FEEDS) publishers.push(`${FEED_PREFIX}${url}`);
  return publishers;
}

/** Search keywords for the APIs: each company's name and aliases. */
const keywordsOf = (companies: Company[]) => [
  ...new Set(companies.flatMap((company) => [company.name, ...company.aliases])),
];

/** The oldest date a run reads: NEWS_LOOKBACK_DAYS before it. */
const lookbackStart = (settings: NewsSettings, now: Date) =>
  new Date(now.getTime() - settings.NEWS_LOOKBACK_DAYS * 86_400_000);

/** The publisher's new items, or why it was skipped. */
async function fetchFrom(
  publisher: PublisherId,
  input: { settings: NewsSettings; fetch: Fetcher; since: Date; now: Date; companies: Company[] },
): Promise<AdapterResult | string> {
  const keywords = keywordsOf(input.companies);
  if (publisher === "guardian") {
    if (!input.settings.GUARDIAN_API_KEY) return "GUARDIAN_API_KEY is not set";
    return fetchGuardian({ fetch: input.fetch, apiKey: input.settings.GUARDIAN_API_KEY, keywords, since: input.since });
  }
  if (publisher === "nyt") {
    if (!input.settings.NYT_API_KEY) return "NYT_API_KEY is not set";
    return fetchNyt({ ...input, apiKey: input.settings.NYT_API_KEY, keywords });
  }
  if (publisher.startsWith(FEED_PREFIX)) {
    const url = publisher.slice(FEED_PREFIX.length);
    // A message queued before NEWS_FEEDS changed must not make the Worker fetch a URL nobody configured.
    if (!input.settings.NEWS_FEEDS.includes(url)) return "the feed is no longer listed in NEWS_FEEDS";
    // A feed's items are read back to the lookback, not the cursor: an item may enter the feed hours after the date
    // it carries (a date without a time, a wrong zone, late indexing) and would otherwise never be stored. Storing is
    // idempotent by fingerprint, and a feed holds at most MAX_ITEMS.
    return fetchFeed({ fetch: input.fetch, url, since: lookbackStart(input.settings, input.now) });
  }
  if (publisher.startsWith(SAMPLE_PREFIX)) {
    // Queued while NEWS_DEMO was true, run after it was turned off: the sample must not mix with real articles.
    if (!input.settings.NEWS_DEMO) return "NEWS_DEMO is not true";
    return fetchSample(publisher, keywords, input.now);
  }
  return "unknown publisher";
}

/**
 * Normalises a publisher's item for storage; undefined when it has no usable title (none, or longer than an admin may
 * write: a feed's title is shown in every list) or URL.
 */
export async function normaliseItem(
  item: PublisherItem,
  matcher: (text: string) => string[],
  now: Date,
): Promise<IncomingArticle | undefined> {
  const title = htmlToText(item.title);
  const url = httpUrl(item.url);
  if (!title || title.length > MAX_TITLE_LENGTH || !url) return undefined;
  const abstract = makeAbstract(item.abstractHtml);
  return {
    fingerprint: await articleFingerprint(title, item.source),
    title,
    abstract,
    url,
    thumbnail: httpUrl(item.thumbnail) ?? null,
    source: item.source,
    // An item dated ahead of the run (a wrong zone, or a feed that wants the top of every list) counts as new now.
    publishedAt: item.publishedAt && item.publishedAt < now ? item.publishedAt : now,
    tickers: matcher(`${title}\n${abstract}`),
  };
}

const DAY_MS = 86_400_000;
const startOfUtcDay = (date: Date) => new Date(Math.floor(date.getTime() / DAY_MS) * DAY_MS);

/**
 * Where the publisher's cursor goes after a run that fetched from `since`, and the warnings that say why when it is not
 * the run's start. A run that read every match moves it to `now`. One that stopped early (the APIs answer oldest
 * first) moves it to the publication time of the last item it read, so that the next run asks again from there and
 * nothing inside the window is lost; never back before `since` (plus the overlap), so that the window only moves on.
 * The APIs take whole days: when the page cap was reached inside since's day, the next run would read the same
 * pages again for ever, so the cursor moves to the next day and the rest of that one is skipped, with a warning.
 */
export function nextCursor(
  publisher: PublisherId,
  fetched: AdapterResult,
  window: { since: Date; now: Date },
): { fetchedUntil: Date; warnings: string[] } {
  const { since, now } = window;
  if (!fetched.stoppedEarly) return { fetchedUntil: now, warnings: [] };
  const lastRead = fetched.items.findLast((item) => item.publishedAt)?.publishedAt ?? since;
  const floor = since.getTime() + CURSOR_OVERLAP_MS;
  const fetchedUntil = new Date(Math.min(now.getTime(), Math.max(floor, lastRead.getTime())));
  const nextSince = new Date(fetchedUntil.getTime() - CURSOR_OVERLAP_MS);
  if (fetched.stoppedEarly === "page-cap" && startOfUtcDay(nextSince).getTime() <= startOfUtcDay(since).getTime()) {
    const nextDay = new Date(startOfUtcDay(since).getTime() + DAY_MS);
    const day = since.toISOString().slice(0, 10);
    return {
      fetchedUntil: new Date(Math.min(now.getTime(), nextDay.getTime() + CURSOR_OVERLAP_MS)),
      warnings: [
        `WARNING: ${publisher}: more matches published on ${day} than a run reads; the rest of that day is skipped`,
      ],
    };
  }
  const at = fetchedUntil.toISOString();
  return {
    fetchedUntil,
    warnings: [
      `WARNING: ${publisher}: run cut short: the cursor is at ${at}, the last item read; the next run goes on from there`,
    ],
  };
}

/**
 * Runs one publisher. Throws when the publisher fails (the queue retries with backoff); returns warnings for
 * job_runs otherwise, including the skip of a publisher without a key.
 */
export async function ingestPublisher(
  db: Database,
  input: { publisher: PublisherId; settings: NewsSettings; fetch: Fetcher; now: Date },
): Promise<{ warnings: string[] }> {
  const { publisher, now } = input;
  const cursor = await getCursor(db, publisher);
  const since = cursor ? new Date(cursor.getTime() - CURSOR_OVERLAP_MS) : lookbackStart(input.settings, now);
  const companies = await listCompanies(db);
  const fetched = await fetchFrom(publisher, { ...input, since, companies });
  if (typeof fetched === "string") {
    logInfo(`news: skipping publisher ${publisher}: ${fetched}`, { publisher });
    return { warnings: [`SKIPPED: ${publisher}: ${fetched}`] };
  }

  const matcher = companyMatcher(companies);
  const articles: IncomingArticle[] = [];
  for (const item of fetched.items) {
    const article = await normaliseItem(item, matcher, now);
    if (article) articles.push(article);
  }
  const cursorMove = nextCursor(publisher, fetched, { since, now });
  const outcome = await upsertArticles(db, {
    articles,
    cursor: { publisher, fetchedUntil: cursorMove.fetchedUntil },
    now,
  });
  const skipped = fetched.items.length - articles.length;
  const counts = `${outcome.inserted} new, ${outcome.updated} updated, ${outcome.unchanged} unchanged`;
  const summary = `INFO: ${publisher}: ${fetched.items.length} fetched, ${counts}`;
  logInfo("news: ingested", { publisher, fetched: fetched.items.length, ...outcome, skipped });
  return {
    warnings: [
      summary,
      ...fetched.warnings,
      ...cursorMove.warnings,
      ...(outcome.removed > 0
        ? [`INFO: ${publisher}: ${outcome.removed} item(s) an admin deleted or retitled left out`]
        : []),
      ...(skipped > 0 ? [`WARNING: ${publisher}: ${skipped} item(s) without a usable title or URL skipped`] : []),
    ],
  };
}
