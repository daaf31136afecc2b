// The object cache's SRV lookup over DNS over HTTPS (plain Node, the resolver faked): an answer within
// MAX_SRV_ANSWER_BYTES gives the nodes, a larger one fails the lookup, naming the bound, without being read whole.
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemcacheError } from "../../../../src/ratelimit/stores/memcache/protocol";
import { lookupSrv } from "../../../../src/ratelimit/stores/memcache/srv";

const NAME = "_memcache._tcp.test.internal";
const DOH_URL = "https://doh.test/dns-query";
const CHUNK_BYTES = 16_384;
/** MAX_SRV_ANSWER_BYTES, as documented. */
const BOUND = 65_536;

afterEach(() => {
  vi.restoreAllMocks();
});

/** A resolver's JSON answer naming `count` nodes, node-0000 to node-<count - 1>, all at priority 10. */
const answerNaming = (count: number) =>
  JSON.stringify({
    Status: 0,
    Answer: Array.from({ length: count }, (_, i) => ({
      name: `${NAME}.`,
      type: 33,
      TTL: 300,
      data: `10 5 11211 node-${String(i).padStart(4, "0")}.cache.internal.`,
    })),
  });

/** `text` as a body streamed in CHUNK_BYTES chunks, counting its reads (none before the first) and a cancel. */
function watchedBody(text: string) {
  const bytes = new TextEncoder().encode(text);
  const watched = { pulls: 0, cancelled: false };
  const source = {
    pull(controller: ReadableStreamDefaultController<Uint8Array>) {
      const start = watched.pulls * CHUNK_BYTES;
      watched.pulls += 1;
      if (start >= bytes.length) controller.close();
      else controller.enqueue(bytes.slice(start, start + CHUNK_BYTES));
    },
    cancel() {
      watched.cancelled = true;
    },
  };
  return { body: new ReadableStream<Uint8Array>(source, { highWaterMark: 0 }), watched };
}

/** The resolver answering `body` to the lookup of NAME; any other fetch fails the test. */
function resolver(body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) {
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    const url = String(input);
    if (url !== `${DOH_URL}?name=${encodeURIComponent(NAME)}&type=SRV`) throw new Error(`unexpected fetch to ${url}`);
    return new Response(body, { headers: { "content-type": "application/dns-json", ...headers } });
  });
}

/** What `promise` rejected with. */
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable("the lookup gave nodes"),
    (error: unknown) => error,
  );

const TOO_LARGE = `objcache: SRV lookup of ${NAME} failed: the answer is larger than ${BOUND} bytes (MAX_SRV_ANSWER_BYTES)`;

describe("lookupSrv", () => {
  it("reads an answer within MAX_SRV_ANSWER_BYTES, whole", async () => {
    const { body, watched } = watchedBody(answerNaming(2));
    resolver(body);
    expect(await lookupSrv(NAME, DOH_URL, 1000)).toEqual([
      { host: "node-0000.cache.internal", port: 11211 },
      { host: "node-0001.cache.internal", port: 11211 },
    ]);
    expect(watched).toEqual({ pulls: 2, cancelled: false });
  });

  it("fails naming the bound on a streamed answer past it, and stops reading at its first chunk past it", async () => {
    const text = answerNaming(2000);
    expect(text.length).toBeGreaterThan(2 * BOUND);
    const { body, watched } = watchedBody(text);
    resolver(body);
    const failure = await failureOf(lookupSrv(NAME, DOH_URL, 1000));
    expect(failure).toBeInstanceOf(MemcacheError);
    expect((failure as MemcacheError).message).toBe(TOO_LARGE);
    // 4 chunks make the bound; the 5th passes it.
    expect(watched).toEqual({ pulls: 5, cancelled: true });
  });

  it("fails naming the bound on a declared length past it, reading nothing", async () => {
    const text = answerNaming(2000);
    const { body, watched } = watchedBody(text);
    resolver(body, { "content-length": String(new TextEncoder().encode(text).length) });
    const failure = await failureOf(lookupSrv(NAME, DOH_URL, 1000));
    expect((failure as MemcacheError).message).toBe(TOO_LARGE);
    expect(watched).toEqual({ pulls: 0, cancelled: true });
  });
});
