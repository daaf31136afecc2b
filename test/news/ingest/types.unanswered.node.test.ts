// Publishers that give no usable answer (plain Node): the whole exchange, body included, ends within FETCH_TIMEOUT_MS,
// and a silence or a failed connection fails the run with a PublisherError naming the publisher, never the URL.
import { afterEach, describe, expect, it, vi } from "vitest";
import { fetchFeed } from "../../../src/news/ingest/feed";
import { FETCH_TIMEOUT_MS, fetchJson, PublisherError, type Fetcher } from "../../../src/news/ingest/types";

const API_URL = "https://api.example/search?api-key=secret";
const FEED_URL = "https://feeds.example/a.xml";
const since = new Date(0);

/** The time-outs asked for; each signal fires after 50 ms instead, so that the test need not wait 15 s. */
function shortTimeouts(): number[] {
  const asked: number[] = [];
  const timeout = AbortSignal.timeout.bind(AbortSignal);
  vi.spyOn(AbortSignal, "timeout").mockImplementation((ms) => {
    asked.push(ms);
    return timeout(50);
  });
  return asked;
}

/** A reason of the request's signal, once it fires: what the runtime's fetch gives a publisher that never answers. */
const whenAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));

/** Never answers: rejects when the request's signal fires. */
const silent: Fetcher = (_url, init) => whenAborted(init!.signal!);

/** Answers its headers and part of a body that never ends (until the request's signal fires). */
const trickling: Fetcher = async (_url, init) => {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"response": {"status": "ok", "results": ['));
      whenAborted(init!.signal!).catch((reason) => controller.error(reason));
    },
  });
  return new Response(body, { headers: { "content-type": "application/json" } });
};

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a publisher that gives no answer", () => {
  it(`fails after FETCH_TIMEOUT_MS (${FETCH_TIMEOUT_MS / 1000} s) when it never answers`, async () => {
    const asked = shortTimeouts();
    await expect(fetchJson(silent, "guardian", API_URL)).rejects.toEqual(
      new PublisherError("guardian did not answer within 15 s"),
    );
    await expect(fetchFeed({ fetch: silent, url: FEED_URL, since })).rejects.toEqual(
      new PublisherError(`feed ${FEED_URL} did not answer within 15 s`),
    );
    expect(asked).toEqual([FETCH_TIMEOUT_MS, FETCH_TIMEOUT_MS]);
    expect(FETCH_TIMEOUT_MS).toBe(15_000);
  });

  it("fails after the same time-out when its body never ends", async () => {
    const asked = shortTimeouts();
    await expect(fetchJson(trickling, "nyt", API_URL)).rejects.toEqual(
      new PublisherError("nyt did not send its whole answer within 15 s"),
    );
    await expect(fetchFeed({ fetch: trickling, url: FEED_URL, since })).rejects.toEqual(
      new PublisherError(`feed ${FEED_URL} did not send its whole answer within 15 s`),
    );
    expect(asked).toEqual([FETCH_TIMEOUT_MS, FETCH_TIMEOUT_MS]);
  });

  it("names a connection that failed, without the URL that holds the key", async () => {
    const lost = () => Promise.reject(new Error("Network connection lost."));
    await expect(fetchJson(lost, "nyt", API_URL)).rejects.toEqual(
      new PublisherError("nyt could not be reached: Network connection lost."),
    );
    await expect(fetchFeed({ fetch: lost, url: FEED_URL, since })).rejects.toEqual(
      new PublisherError(`feed ${FEED_URL} could not be reached: Network connection lost.`),
    );
    const quoting = (url: string) => Promise.reject(new TypeError(`Fetch API cannot load: ${url}`));
    await expect(fetchJson(quoting, "guardian", API_URL)).rejects.toEqual(
      new PublisherError("guardian could not be reached: Fetch API cannot load: <its URL>"),
    );
    const broken: Fetcher = async () =>
      new Response(
        new ReadableStream({
          start: (controller) => controller.error(new Error("Network connection lost.")),
        }),
      );
    await expect(fetchJson(broken, "guardian", API_URL)).rejects.toEqual(
      new PublisherError("guardian broke off its answer: Network connection lost."),
    );
  });
});
