// The shared bounded fetch (plain Node): the exchange, body included, ends within its time-out, every failure to answer
// is a NoAnswer that tells a silence from a failure and the head from the body, and a body past its bound or not UTF-8
// is refused as the caller words it, released unread.
import { describe, expect, it } from "vitest";
import { fetchWithin, NoAnswer, readAnswerText, type Unreadable } from "../../../src/shared/http/bounded-fetch";

const SERVICE_URL = "https://service.test/answer";
const TIMEOUT_MS = 30;
const MAX_BYTES = 8;

/** A reason of the request's signal, once it fires: what the runtime's fetch gives a service that never answers. */
const whenAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));

/** A caller's wording of a NoAnswer: an Error holding it, so that the tests see what fetchWithin gave it. */
class Worded extends Error {
  constructor(readonly failure: NoAnswer) {
    super(`worded: ${failure.message}`);
  }
}
const worded = (failure: NoAnswer) => new Worded(failure);

/** A caller's wording of a body it could not read: an Error holding why, so that the tests see what it was given. */
class Refused extends Error {
  constructor(readonly why: Unreadable) {
    super(`refused: ${why}`);
  }
}
const wording = { refused: (why: Unreadable) => new Refused(why), unanswered: worded };

/** What `promise` rejected with. */
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable("it gave an answer"),
    (error: unknown) => error,
  );

/** A body that counts its reads (none before the first) and records whether it was cancelled. */
function watchedBody(pull: (controller: ReadableStreamDefaultController<Uint8Array>) => void) {
  const watched = { pulls: 0, cancelled: false };
  const source = {
    pull(controller: ReadableStreamDefaultController<Uint8Array>) {
      watched.pulls += 1;
      pull(controller);
    },
    cancel() {
      watched.cancelled = true;
    },
  };
  return { body: new ReadableStream<Uint8Array>(source, { highWaterMark: 0 }), watched };
}

describe("fetchWithin", () => {
  it("asks with the request's own init and a signal, and gives the answer as it came", async () => {
    const asked: [string, RequestInit][] = [];
    const answer = new Response("ok", { status: 503 });
    const fetcher = async (url: string, init: RequestInit) => {
      asked.push([url, init]);
      return answer;
    };
    expect(
      await fetchWithin(fetcher, SERVICE_URL, { method: "PUT", headers: { accept: "text/plain" } }, TIMEOUT_MS, worded),
    ).toBe(answer);
    expect(asked).toEqual([
      [SERVICE_URL, { method: "PUT", headers: { accept: "text/plain" }, signal: expect.any(AbortSignal) }],
    ]);
    expect(asked[0][1].signal!.aborted).toBe(false);
  });

  it("ends a service that never answers after the time-out, worded by the caller from a NoAnswer of a silence", async () => {
    const started = Date.now();
    const failure = await failureOf(
      fetchWithin((_url, init) => whenAborted(init.signal!), SERVICE_URL, {}, TIMEOUT_MS, worded),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(failure).toBeInstanceOf(Worded);
    expect((failure as Worded).message).toBe("worded: no answer within the time-out");
    expect((failure as Worded).failure).toBeInstanceOf(NoAnswer);
    expect((failure as Worded).failure).toMatchObject({
      answered: false,
      timedOut: true,
      message: "no answer within the time-out",
    });
  });

  it("names a failed connection with the runtime's words, an Error's or not", async () => {
    const refused = await failureOf(
      fetchWithin(() => Promise.reject(new TypeError("refused")), SERVICE_URL, {}, TIMEOUT_MS, worded),
    );
    expect(refused).toBeInstanceOf(Worded);
    expect((refused as Worded).failure).toMatchObject({
      answered: false,
      timedOut: false,
      detail: "refused",
      message: "refused",
    });
    const odd = await failureOf(fetchWithin(() => Promise.reject("odd"), SERVICE_URL, {}, TIMEOUT_MS, worded));
    expect((odd as Worded).failure).toMatchObject({ answered: false, timedOut: false, detail: "odd" });
  });

  it("words even a time-out it cannot set as a NoAnswer, without asking: nothing else leaves it", async () => {
    let asked = 0;
    const fetcher = async () => {
      asked += 1;
      return new Response("ok");
    };
    const failure = await failureOf(fetchWithin(fetcher, SERVICE_URL, {}, -1, worded));
    expect(asked).toBe(0);
    expect(failure).toBeInstanceOf(Worded);
    expect((failure as Worded).failure).toMatchObject({
      answered: false,
      timedOut: false,
      detail: 'The value of "delay" is out of range. It must be >= 0 && <= 4294967295. Received -1',
    });
  });
});

describe("readAnswerText", () => {
  it("reads a body within the bound as text", async () => {
    expect(await readAnswerText(new Response("12345678"), MAX_BYTES, wording)).toBe("12345678");
    expect(await readAnswerText(new Response(null, { status: 204 }), MAX_BYTES, wording)).toBe("");
  });

  it("refuses a declared length past the bound unread, and releases the body", async () => {
    const { body, watched } = watchedBody((controller) => controller.enqueue(new Uint8Array(4)));
    const response = new Response(body, { headers: { "content-length": "9" } });
    const failure = await failureOf(readAnswerText(response, MAX_BYTES, wording));
    expect(failure).toEqual(new Refused("too large"));
    expect(watched).toEqual({ pulls: 0, cancelled: true });
  });

  it("stops a streamed body at the first chunk past the bound, and releases the rest", async () => {
    const { body, watched } = watchedBody((controller) => controller.enqueue(new Uint8Array(5)));
    expect(await failureOf(readAnswerText(new Response(body), MAX_BYTES, wording))).toEqual(new Refused("too large"));
    expect(watched).toEqual({ pulls: 2, cancelled: true });
  });

  it("refuses a body that is not UTF-8", async () => {
    const failure = await failureOf(
      readAnswerText(new Response(new Uint8Array([0x7b, 0xe9, 0x7d])), MAX_BYTES, wording),
    );
    expect(failure).toEqual(new Refused("not UTF-8"));
  });

  it("ends a body that stalls with the request's signal, worded as a NoAnswer of an answer begun", async () => {
    const stalling = async (_url: string, init: RequestInit) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array([0x7b]));
          whenAborted(init.signal!).catch((reason) => controller.error(reason));
        },
      });
      return new Response(body);
    };
    const response = await fetchWithin(stalling, SERVICE_URL, {}, TIMEOUT_MS, worded);
    const failure = await failureOf(readAnswerText(response, MAX_BYTES, wording));
    expect(failure).toBeInstanceOf(Worded);
    expect((failure as Worded).failure).toMatchObject({
      answered: true,
      timedOut: true,
      message: "no whole answer within the time-out",
    });
  });

  it("names a body that broke off with the runtime's words", async () => {
    const broken = new ReadableStream<Uint8Array>({
      start: (controller) => controller.error(new Error("Network connection lost.")),
    });
    const failure = await failureOf(readAnswerText(new Response(broken), MAX_BYTES, wording));
    expect(failure).toBeInstanceOf(Worded);
    expect((failure as Worded).failure).toMatchObject({
      answered: true,
      timedOut: false,
      detail: "Network connection lost.",
      message: "Network connection lost.",
    });
  });
});
