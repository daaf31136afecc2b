// One assertion on an answer's status that shows the answer's body when it fails: vitest's diff of an object leaves
// out the properties that match, and so the body, which names the cause (a refused push, a validation message).
import { expect } from "vitest";

/** How much of the body a failure shows. */
const SHOWN_BODY_CHARS = 2000;

/** Asserts the answer's status; a failure's message holds `what` and the answer's body. */
export function expectStatus(answer: { status: number; body: unknown }, expected: number, what = "the call"): void {
  const body = typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body);
  expect(answer.status, `${what} answered ${String(body).slice(0, SHOWN_BODY_CHARS)}`).toBe(expected);
}
