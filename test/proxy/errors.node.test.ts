// The proxy's one mapping from domain error kinds to the spec's answers (src/proxy/errors.ts): each kind's status, the
// headers a kind's data gives (ETag of a stale revision, X-Job-Id of a failed run), and the body, byte for byte.
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { JobLocked } from "../../src/jobs/locks";
import {
  CannotProcess,
  Conflict,
  Forbidden,
  Invalid,
  NotFound,
  PreconditionFailed,
  QuotaExceeded,
  RunFailed,
} from "../../src/proxy/domain-errors";
import { proxyErrorResponse } from "../../src/proxy/errors";
import { DomainError } from "../../src/shared/domain-errors";

/** What the proxy answers when a handler throws `error`: status, the headers a domain error may add, and the body. */
async function answerTo(error: Error) {
  const app = new Hono();
  app.get("/", () => {
    throw error;
  });
  app.onError(proxyErrorResponse);
  const response = await app.request("/");
  return {
    status: response.status,
    etag: response.headers.get("ETag"),
    jobId: response.headers.get("X-Job-Id"),
    body: await response.text(),
  };
}

const body = (payload: string) => `{"success":false,"payload":${JSON.stringify(payload)},"warnings":[]}`;

describe("proxy errors", () => {
  it.each([
    [new Invalid("a: refused"), 400],
    [new Forbidden(), 403],
    [new QuotaExceeded("over the quota"), 403],
    [new NotFound("none"), 404],
    [new Conflict("taken"), 409],
    [new PreconditionFailed("stale"), 412],
    [new DomainError("invalid_state", "cannot be generated"), 422],
    [new JobLocked({ kind: "gensynchaprx", holder: "h", acquiredAt: 0, expiresAt: 1 }), 423],
    [new CannotProcess("cannot"), 500],
    [new DomainError("failed", "the run failed"), 500],
  ])("answers %s with %i and its message, without extra headers", async (error, status) => {
    expect(await answerTo(error)).toEqual({ status, etag: null, jobId: null, body: body(error.message) });
  });

  it("answers a stale revision with the project's current entity tag", async () => {
    expect(await answerTo(new PreconditionFailed("stale", '"p1.r2"'))).toEqual({
      status: 412,
      etag: '"p1.r2"',
      jobId: null,
      body: body("stale"),
    });
  });

  it("answers a failed run with its kind's status and the run in X-Job-Id", async () => {
    expect(await answerTo(new RunFailed("not_found", "no such version", 7))).toEqual({
      status: 404,
      etag: null,
      jobId: "7",
      body: body("no such version"),
    });
  });
});
