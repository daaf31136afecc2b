// An outside service's answer bounded in time and size (publishers' feeds, HAProxy agents, an ACME CA): a request whose
// exchange, body included, ends within a time-out, and a body read under a byte bound as UTF-8. What a silence, a
// failed connection or a refused body is called is left to each caller, which words it for its own service.
import { InvalidUtf8, PayloadTooLarge, readBodyText } from "./request-body";

/** The service gave no answer, or not all of it: the time-out ran out, or the connection failed or broke off. */
export class NoAnswer extends Error {
  override name = "NoAnswer";
  constructor(
    /** Whether the answer had begun (its status and headers came) when it stopped. */
    readonly answered: boolean,
    /** Whether the time-out ended it; otherwise `detail` holds the runtime's reason. */
    readonly timedOut: boolean,
    readonly detail: string,
  ) {
    super(timedOut ? `no ${answered ? "whole answer" : "answer"} within the time-out` : detail);
  }
}

const noAnswer = (answered: boolean, error: unknown) =>
  new NoAnswer(
    answered,
    error instanceof Error && error.name === "TimeoutError",
    error instanceof Error ? error.message : String(error),
  );

/**
 * `fetcher(url, init)` under a signal that ends the exchange after `timeoutMs`, the body's read included (so that a
 * body that never ends is cut off too). Any failure to get the answer's head is a NoAnswer, which the caller words as
 * its own error by `unanswered` (so it never has to tell a NoAnswer from anything else).
 */
export async function fetchWithin(
  fetcher: (url: string, init: RequestInit) => Promise<Response>,
  url: string,
  init: RequestInit,
  timeoutMs: number,
  unanswered: (failure: NoAnswer) => Error,
): Promise<Response> {
  try {
    return await fetcher(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    throw unanswered(noAnswer(false, error));
  }
}

/** Why a body in hand was not read as text: it runs past its byte bound, or it is not UTF-8. */
export type Unreadable = "too large" | "not UTF-8";

/** How a caller words a body it could not read, as its own errors (so that it never catches the reader's). */
export interface AnswerWording {
  refused: (why: Unreadable) => Error;
  /** A body that stalled past the request's time-out or broke off: often fetchWithin's `unanswered`. */
  unanswered: (failure: NoAnswer) => Error;
}

/**
 * The answer's body as UTF-8 text of at most `maxBytes` bytes, counted as it streams. A longer one is refused as
 * "too large", its body released unread past the bound (or at all, when its declared length says so); one that is not
 * UTF-8 as "not UTF-8"; a body that stalls past the request's time-out or breaks off is a NoAnswer of an answer begun.
 */
export async function readAnswerText(response: Response, maxBytes: number, wording: AnswerWording): Promise<string> {
  try {
    return await readBodyText(response, { maxBytes, setting: "the caller's bound", drainExcess: false });
  } catch (error) {
    if (error instanceof PayloadTooLarge) {
      if (response.body && !response.body.locked) await response.body.cancel().catch(() => {});
      throw wording.refused("too large");
    }
    if (error instanceof InvalidUtf8) throw wording.refused("not UTF-8");
    throw wording.unanswered(noAnswer(true, error));
  }
}
