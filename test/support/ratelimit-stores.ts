// Helpers for the counter-store suites inside the Workers runtime: a Worker whose env selects a store, and direct
// access to the test servers (a Redis connection through the project's own client, a memcached connection).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import worker from "../../src/index";
import { RespConnection } from "../../src/ratelimit/stores/redis/connection";
import type { Command, Reply } from "../../src/ratelimit/stores/redis/resp";
import { MemcacheConnection } from "../../src/ratelimit/stores/memcache/connection";
import type { Request as MemcacheRequest } from "../../src/ratelimit/stores/memcache/protocol";

export interface Answer {
  status: number;
  body: any;
  contentType: string | null;
}

/**
 * A Worker whose env carries these variables; one env object per call of this function, as one isolate would
 * have. `fetch` waits for the request's waitUntil work when `settle` is true.
 */
export function workerWith(vars: Record<string, string>) {
  const varsEnv = { ...env, ...vars } as Env;
  const fetch = async (path: string, init: RequestInit = {}, settle = false): Promise<Answer> => {
    const context = createExecutionContext();
    const response = await worker.fetch(new Request(`http://example.com${path}`, init), varsEnv, context);
    const text = await response.text();
    if (settle) await waitOnExecutionContext(context);
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: response.status, body, contentType: response.headers.get("content-type") };
  };
  return {
    env: varsEnv,
    fetch,
    rateLimit: (body: unknown) => fetch("/json", { method: "POST", body: JSON.stringify(body) }),
  };
}

/** The POST /json answer of a Worker whose settings are refused; the refusal it logs is kept out of the test output. */
export async function refusedAnswer(worker: ReturnType<typeof workerWith>, body: unknown): Promise<Answer> {
  const error = vi.spyOn(console, "error").mockImplementation(() => {});
  try {
    return await worker.rateLimit(body);
  } finally {
    error.mockRestore();
  }
}

/** Runs commands on a Redis test server over a fresh connection (closed afterwards). */
export async function redis(port: string | number, commands: Command[], password?: string): Promise<Reply[]> {
  const connection = await RespConnection.open(
    { host: "127.0.0.1", port: Number(port) },
    { tls: false, timeoutMs: 5000, auth: password ? { password } : undefined },
  );
  try {
    return await connection.send(commands);
  } finally {
    connection.close();
  }
}

/** Runs requests on a memcached test server over a fresh connection (closed afterwards). */
export async function memcached(port: string | number, requests: MemcacheRequest[]) {
  const connection = await MemcacheConnection.open({ host: "127.0.0.1", port: Number(port) }, false, 5000);
  try {
    return await connection.send(requests);
  } finally {
    connection.close();
  }
}

/** Polls `read` until it returns `expected` (asynchronous work landing), failing after about 5 s. */
export async function eventually<T>(read: () => Promise<T>, expected: T): Promise<T> {
  let last: T = await read();
  for (let i = 0; i < 100 && JSON.stringify(last) !== JSON.stringify(expected); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    last = await read();
  }
  return last;
}
