// The news demo of `npm start`: with no publisher configured the news API would stay empty, so npm start turns on
// NEWS_DEMO (ingestion reads the bundled sample articles instead of the publishers) and runs the ingestion once.
import { isSet } from "./settings.mjs";

/** The settings that name a publisher: any of them set, ingestion has somewhere real to read. */
const PUBLISHER_SETTINGS = ["GUARDIAN_API_KEY", "NYT_API_KEY", "NEWS_FEEDS"];

/** The news ingestion's Cron Trigger (src/job-registry.ts, wrangler.toml [triggers]), as /__scheduled takes it. */
export const NEWS_CRON = "*/30 * * * *";

/**
 * Whether npm start turns the demo on: no publisher set, and NEWS_DEMO not set either way (empty means unset).
 * @param {Record<string, unknown>} values
 */
export const wantsNewsDemo = (values) =>
  !PUBLISHER_SETTINGS.some((name) => isSet(values[name])) && !isSet(values.NEWS_DEMO);

/**
 * Fires the news cron once on the running Worker (wrangler dev --test-scheduled); the ingestion itself then runs
 * from the queue within seconds. Resolves to a warning when the Worker did not take it, else undefined.
 * @param {string} origin
 * @returns {Promise<string | undefined>}
 */
export async function runNewsIngestion(origin) {
  const url = `${origin}/__scheduled?cron=${NEWS_CRON.replaceAll(" ", "+")}`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    await response.arrayBuffer();
    if (response.ok) return undefined;
    return `npm start: the news ingestion did not start: ${url} answered ${response.status}`;
  } catch (error) {
    return `npm start: the news ingestion did not start: ${url}: ${error instanceof Error ? error.message : error}`;
  }
}
