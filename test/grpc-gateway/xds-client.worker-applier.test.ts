// The gateway's xDS client storing a snapshot in the Worker (workerApplier), in plain Node against a local HTTP stub:
// the request it sends, which answers it asks again (until the Worker decides or the stream ends), and which refusals it
// passes on.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { workerApplier } from "../../grpc-gateway/xds-client.mjs";

interface SeenRequest {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

interface Answer {
  status: number;
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A stand-in for the Worker that records each request and gives the answers in turn (the last one repeats). */
async function startWorkerStub(answers: Answer[]): Promise<{ url: string; seen: SeenRequest[] }> {
  const seen: SeenRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      seen.push({
        method: request.method ?? "",
        url: request.url ?? "",
        authorization: request.headers.authorization,
        contentType: request.headers["content-type"],
        body: Buffer.concat(chunks).toString("utf8"),
      });
      const answer = answers[Math.min(seen.length, answers.length) - 1];
      response.writeHead(answer.status, { "content-type": "application/json" });
      response.end(answer.body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** A signal that never aborts: the stream stays. */
const staying = () => new AbortController().signal;

describe("workerApplier", () => {
  const configs = [{ name: "a", domain: "a" }];
  const OK: Answer = { status: 200, body: '{"domains":["a"]}' };
  const UNAVAILABLE: Answer = { status: 503, body: "busy" };

  it("PUTs the snapshot as {configs} to /rlconfig/files with the bearer, and answers ok on 200", async () => {
    const stub = await startWorkerStub([OK]);
    const log = vi.fn();
    const apply = workerApplier({ url: stub.url, token: "secret-token", log, retryDelaysMs: [10, 10] });
    expect(await apply(configs, "v1", staying())).toEqual({ ok: true });
    expect(stub.seen).toEqual([
      {
        method: "PUT",
        url: "/rlconfig/files",
        authorization: "Bearer secret-token",
        contentType: "application/json",
        body: JSON.stringify({ configs }),
      },
    ]);
    expect(log).not.toHaveBeenCalled();
  });

  it("retries a 5xx answer after each delay, then succeeds", async () => {
    const stub = await startWorkerStub([UNAVAILABLE, UNAVAILABLE, OK]);
    const log = vi.fn();
    const apply = workerApplier({ url: stub.url, token: "t", log, retryDelaysMs: [10, 10] });
    expect(await apply(configs, "v2", staying())).toEqual({ ok: true });
    expect(stub.seen.length).toBe(3);
    expect(stub.seen.every((request) => request.body === JSON.stringify({ configs }))).toBe(true);
    const problem = "the rate limit service answered 503";
    expect(log.mock.calls).toEqual([
      ["warn", "xds: storing the snapshot failed; trying again", { version: "v2", attempt: 1, problem }],
      ["warn", "xds: storing the snapshot failed; trying again", { version: "v2", attempt: 2, problem }],
    ]);
  });

  it("keeps asking past the last delay, which repeats, until the Worker decides", async () => {
    const failing = { status: 500, body: "" };
    const stub = await startWorkerStub([failing, { status: 502, body: "" }, failing, failing, failing, OK]);
    const log = vi.fn();
    const apply = workerApplier({ url: stub.url, token: "t", log, retryDelaysMs: [10, 20] });
    const started = Date.now();
    expect(await apply(configs, "v3", staying())).toEqual({ ok: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(10 + 20 * 4);
    expect(stub.seen.length).toBe(6);
    expect(log.mock.calls.map((call) => call[2].problem)).toEqual([
      "the rate limit service answered 500",
      "the rate limit service answered 502",
      "the rate limit service answered 500",
      "the rate limit service answered 500",
      "the rate limit service answered 500",
    ]);
  });

  /** The Worker refuses once: the applier passes `error` on without retrying or logging. */
  async function expectPassedOn(refusal: { status: number; body: string }, error: string) {
    const stub = await startWorkerStub([refusal, OK]);
    const log = vi.fn();
    const apply = workerApplier({ url: stub.url, token: "t", log, retryDelaysMs: [10, 10] });
    expect(await apply(configs, "v5", staying())).toEqual({ ok: false, error });
    expect(stub.seen.length).toBe(1);
    expect(log).not.toHaveBeenCalled();
  }

  it.each([401, 404])(
    "asks again after a %i answer (a token the Worker refuses), logging it as an error",
    async (status) => {
      const stub = await startWorkerStub([{ status, body: "no" }, OK]);
      const log = vi.fn();
      const apply = workerApplier({ url: stub.url, token: "t", log, retryDelaysMs: [10, 10] });
      expect(await apply(configs, "v4", staying())).toEqual({ ok: true });
      expect(stub.seen.length).toBe(2);
      expect(log.mock.calls).toEqual([
        ["error", "xds: the rate limit service refuses the admin token; trying again", { version: "v4", status }],
      ]);
    },
  );

  it.each<[string, string, string]>([
    [
      "the Worker's error message",
      '{"error":"a: invalid rate limit unit \'UNKNOWN\'"}',
      "a: invalid rate limit unit 'UNKNOWN'",
    ],
    ["a body without an error field, as is", '{"message":"x"}', '{"message":"x"}'],
    ["a body that is not JSON, as is", "not json", "not json"],
  ])("passes on a 400 refusal without retrying: %s", async (_label, body, error) => {
    await expectPassedOn({ status: 400, body }, error);
  });

  it("passes on a 413 refusal, a snapshot over the Worker's body limit, without retrying", async () => {
    const error = "request body is larger than 4194304 bytes (the limit set by RATELIMIT_CONFIG_MAX_BODY_BYTES)";
    await expectPassedOn({ status: 413, body: JSON.stringify({ error }) }, error);
  });

  it("asks an unreachable Worker again until the signal aborts, then answers aborted", async () => {
    const stub = await startWorkerStub([OK]);
    const closed = servers.pop()!;
    await new Promise((resolve) => closed.close(resolve));
    const streamGone = new AbortController();
    const log = vi.fn((..._args: unknown[]) => {
      if (log.mock.calls.length === 3) streamGone.abort();
    });
    const apply = workerApplier({ url: stub.url, token: "t", log, retryDelaysMs: [10, 10, 60_000] });
    const started = Date.now();
    expect(await apply(configs, "v6", streamGone.signal)).toEqual({ ok: false, aborted: true });
    expect(Date.now() - started).toBeLessThan(5_000);
    const problem = "the rate limit service cannot be reached: fetch failed";
    expect(log.mock.calls.map((call) => call[2])).toEqual([
      { version: "v6", attempt: 1, problem },
      { version: "v6", attempt: 2, problem },
      { version: "v6", attempt: 3, problem },
    ]);
  });

  it("does not ask at all once the signal has aborted", async () => {
    const stub = await startWorkerStub([OK]);
    const apply = workerApplier({ url: stub.url, token: "t", log: vi.fn() });
    expect(await apply(configs, "v7", AbortSignal.abort())).toEqual({ ok: false, aborted: true });
    expect(stub.seen).toEqual([]);
  });
});
