// What every publisher adapter returns, and the fetch function they are given (the Worker's fetch in production,
// recorded responses in the tests).
import { fetchWithin, NoAnswer, readAnswerText, type Unreadable } from "../../shared/http/bounded-fetch";
import { cutText } from "../../shared/cut-text";
import { z } from "../../shared/zod";

export type Fetcher = (url: string, init?: RequestInit) => Promise<Response>;

/** An item as a publisher describes it, before normalisation (HTML may remain in the abstract). */
export interface PublisherItem {
  title: string;
  url: string;
  abstractHtml: string;
  thumbnail?: string;
  publishedAt?: Date;
  source: string;
}

export interface AdapterResult {
  items: PublisherItem[];
  warnings: string[];
  /**
   * Why the adapter stopped before the last match, if it did: at its page cap, or rate limited on a later page. The
   * APIs are asked oldest first, so what is left unread is newer than the last item read (see run.ts nextCursor).
   */
  stoppedEarly?: "page-cap" | "rate-limited";
}

/** The most characters of a publisher's own text an error quotes: its answer may hold anything, of any size. */
export const MAX_QUOTED_CHARS = 200;

/** A publisher's text (or a parser's message quoting it) as an error quotes it, cut to MAX_QUOTED_CHARS. */
export const quoted = (text: string) => cutText(text, MAX_QUOTED_CHARS);

/** A publisher that answered with something other than success: the run fails and the queue retries it. */
export class PublisherError extends Error {
  override name = "PublisherError";
}

/** Outbound requests give up after this long, so one slow publisher cannot hold its message forever. */
export const FETCH_TIMEOUT_MS = 15_000;

/** Largest answer read from a publisher (a feed or one page of an API); a larger one fails the run, unread. */
export const MAX_PUBLISHER_BYTES = 5 * 1024 * 1024;

/**
 * Why a publisher gave no usable answer, as the run records it: no answer (or not all of it) within FETCH_TIMEOUT_MS,
 * or a connection that failed. Names `what` (the publisher), never `url` (an API's holds its key), which is cut out
 * of the runtime's message should it quote it.
 */
function unanswered(what: string, url: string, failure: NoAnswer): PublisherError {
  if (failure.timedOut) {
    const wanted = failure.answered ? "send its whole answer" : "answer";
    return new PublisherError(`${what} did not ${wanted} within ${FETCH_TIMEOUT_MS / 1000} s`);
  }
  const cause = failure.detail.replaceAll(url, "<its URL>");
  return new PublisherError(`${what} ${failure.answered ? "broke off its answer" : "could not be reached"}: ${cause}`);
}

/**
 * A publisher's answer as text, the whole exchange within FETCH_TIMEOUT_MS (the signal also ends a body that never
 * does). Any failure is a PublisherError naming `what`: an HTTP failure, no answer in time, a failed connection, or
 * an answer (named `answer`) larger than MAX_PUBLISHER_BYTES or not UTF-8.
 */
export async function fetchPublisherText(
  fetcher: Fetcher,
  input: { what: string; url: string; accept: string; answer: string },
): Promise<string> {
  const unansweredBy = (failure: NoAnswer) => unanswered(input.what, input.url, failure);
  const init = { headers: { accept: input.accept } };
  const response = await fetchWithin(fetcher, input.url, init, FETCH_TIMEOUT_MS, unansweredBy);
  if (!response.ok) {
    await response.body?.cancel();
    throw new PublisherError(`${input.what} answered HTTP ${response.status}`);
  }
  // Read within MAX_PUBLISHER_BYTES, counted while it streams (a declared length is not trusted alone).
  const refused = (why: Unreadable) =>
    new PublisherError(
      why === "too large"
        ? `${input.answer} is larger than ${MAX_PUBLISHER_BYTES} bytes`
        : `${input.answer} is not valid UTF-8`,
    );
  return await readAnswerText(response, MAX_PUBLISHER_BYTES, { refused, unanswered: unansweredBy });
}

/** Fetches JSON (see fetchPublisherText), failing with a PublisherError that names the publisher but never the URL. */
export async function fetchJson(fetcher: Fetcher, publisher: string, url: string): Promise<unknown> {
  const answer = `${publisher}'s answer`;
  const text = await fetchPublisherText(fetcher, { what: publisher, url, accept: "application/json", answer });
  try {
    return JSON.parse(text);
  } catch {
    throw new PublisherError(`${publisher} answered with a body that is not JSON`);
  }
}

/**
 * A publisher's text field as an adapter reads it: anything but a string counts as missing. An API item is parsed
 * field by field with this (and as an empty item when it is no object), so that a malformed item comes out without a
 * title or URL, which the run skips and counts in its warnings, rather than failing the whole page.
 */
export const optionalText = z.string().optional().catch(undefined);

/** The date of a publisher's timestamp, or undefined when it is missing or not a date. */
export function parseDate(value: unknown): Date | undefined {
  if (typeof value !== "string" || value.trim() === "") return undefined;
  // ISO 8601 (also NYT's "+0000" offsets) and RFC 822 (RSS pubDate) both parse here.
  const time = Date.parse(value.trim());
  return Number.isNaN(time) ? undefined : new Date(time);
}

/**
 * The source name of an article URL: guardian and nyt for their sites (so that a story is one article whichever way
 * it came), else the host.
 */
export function sourceOfUrl(url: string): string {
  const host = new URL(url).hostname.toLowerCase().replace(/^www\./, "");
  if (host === "theguardian.com" || host.endsWith(".theguardian.com") || host === "guardian.co.uk") return "guardian";
  if (host === "nytimes.com" || host.endsWith(".nytimes.com")) return "nyt";
  return host;
}
