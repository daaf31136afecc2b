// Exact admission under real concurrency, through wrangler dev and real Durable Objects, on both counter layouts
// (COUNTER_OBJECT_LAYOUT per_key, the default, and sharded): 2000 and 600 simultaneous POST /json hits on one key of
// limit 100 admit exactly 100; bursts that arrive when the isolate's config check is due all get their answer; a
// steady stream of 15 s on one key answers every request 200 and counts each once; and a long tail of 3000 keys never
// seen before, 40 requests at a time, all answer 200 with the OK body (per_key: past COUNTER_OBJECT_ACTIVE_LIMIT, with
// a wait bound long enough for objects to age out); workerd does not restart.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWranglerDev, workerdProcesses, type DevServer } from "../support/wrangler-dev.mjs";
import {
  agent,
  CONNECTIONS,
  keepProxyConnectionsFresh,
  proxyLosses,
  refreshProxyConnections,
  send,
} from "../support/ratelimit-kept-alive";

const STEADY_LIMIT = 1_000_000_000;
const ADMIN = { Authorization: "Bearer integration-admin-token", "content-type": "application/json" };
const CONFIG = `domain: burst
descriptors:
  - key: hot
    rate_limit:
      unit: day
      requests_per_unit: 100
  - key: tail
    rate_limit:
      unit: hour
      requests_per_unit: 1000000
  - key: steady
    rate_limit:
      unit: hour
      requests_per_unit: ${STEADY_LIMIT}
`;

/** Each answer as "status body", the seconds until reset blanked out; counted by distinct answer. */
async function post(server: DevServer, body: unknown): Promise<string> {
  const { status, text } = await send(server, "POST", "/json", JSON.stringify(body));
  return `${status} ${text.replace(/"durationUntilReset":"\d+s"/, '"durationUntilReset":"<left>"')}`;
}

function tally(values: (string | number)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

const hit = (value: string, key = "hot") => ({ domain: "burst", descriptors: [{ entries: [{ key, value }] }] });

const okBody = (requestsPerUnit: number, unit: string) =>
  JSON.stringify({
    overallCode: "OK",
    statuses: [
      {
        code: "OK",
        currentLimit: { requestsPerUnit, unit },
        limitRemaining: requestsPerUnit - 1,
        durationUntilReset: "<left>",
      },
    ],
  });

/** `count` simultaneous hits on one key; the statuses tallied. */
async function burst(server: DevServer, value: string, count: number) {
  const body = JSON.stringify(hit(value));
  await refreshProxyConnections(server);
  const statuses = await Promise.all(
    Array.from({ length: count }, async () => (await send(server, "POST", "/json", body)).status),
  );
  return tally(statuses);
}

describe.each([
  // The tail below passes COUNTER_OBJECT_ACTIVE_LIMIT (2000, the local value): its keys past the limit wait for the
  // oldest objects to age out, up to about 15 s, which the default bound (2 s) would answer with the documented 500
  // (test/ratelimit/stores/durable-object/admission.test.ts). Here the bound lets them wait: slowed, never failed.
  ["per_key", { COUNTER_OBJECT_ADMISSION_MAX_WAIT: "30s" }],
  ["sharded", { COUNTER_OBJECT_LAYOUT: "sharded" }],
])("POST /json under concurrency, %s layout", (layout, layoutVars: Record<string, string>) => {
  let server: DevServer;

  beforeAll(async () => {
    server = await startWranglerDev({ RATELIMIT_ADMIN_TOKEN: "integration-admin-token", ...layoutVars });
    const response = await fetch(`${server.url}/rlconfig/files`, {
      method: "PUT",
      headers: ADMIN,
      body: JSON.stringify({ files: { "burst.yaml": CONFIG } }),
    });
    expect(response.status).toBe(200);
    // Warm the isolate and the objects so the bursts measure counting, not start-up.
    for (let i = 0; i < 5; i++) expect(await post(server, hit("warm-up"))).toMatch(/^200 /);
  });

  afterAll(async () => {
    agent.destroy();
    await server?.stop();
    console.log(
      `${layout}, so far: ${proxyLosses.resent} requests wrangler dev's proxy lost and send sent again, ` +
        `${proxyLosses.heldPings} refreshing GETs it held past their bound`,
    );
  });

  it("admits exactly 100 of 2000 concurrent hits on a key limited to 100, and the runtime does not restart", async () => {
    const runtime = workerdProcesses(server);
    expect(runtime.length).toBeGreaterThan(0);
    expect(await burst(server, "one-key", 2000)).toEqual({ 200: 100, 429: 1900 });
    expect(workerdProcesses(server)).toEqual(runtime);
    const after = await send(server, "POST", "/json", JSON.stringify(hit("one-key")));
    expect(JSON.parse(after.text)).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [
        {
          code: "OVER_LIMIT",
          currentLimit: { requestsPerUnit: 100, unit: "DAY" },
          durationUntilReset: expect.stringMatching(/^\d+s$/),
        },
      ],
    });
  });

  it("admits exactly 100 of 600 concurrent hits on a key limited to 100", async () => {
    expect(await burst(server, "six-hundred", 600)).toEqual({ 200: 100, 429: 500 });
  });

  it("answers every request of a burst that arrives when the isolate's config check is due", async () => {
    // Each burst lands after the check interval (1 s), so its requests find the config view stale together, on
    // objects that do not exist yet. One request's D1 read must not become the others' I/O: each answers 200.
    for (let round = 0; round < 3; round++) {
      await new Promise((resolve) => setTimeout(resolve, 1200));
      await refreshProxyConnections(server);
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => post(server, hit(`fresh-${round}-${i}`))));
      expect(tally(answers)).toEqual({ [`200 ${okBody(100, "DAY")}`]: 60 });
    }
  });

  it("answers a steady stream on one key from 64 clients for 15 s, each request 200 and counted once", async () => {
    // Sustained load, not one burst: a fault in which a woken request answers in another request's context shows only
    // after seconds of it. A one-item shortcut in the store (src/ratelimit/stores/durable-object/store.ts, perObject)
    // failed this test in 7 runs of 8 (a run: one layout), with some 2,000 answers 500 "Cannot perform I/O on behalf
    // of a different request"; a stream of 8 s, once, had none.
    const body = JSON.stringify(hit("one", "steady"));
    await refreshProxyConnections(server);
    const until = Date.now() + 15_000;
    const remaining: number[] = [];
    const failed: string[] = [];
    // A client records what went wrong and goes on, so that no client is still sending when the next test starts.
    const client = async () => {
      while (Date.now() < until) {
        try {
          const { status, text } = await send(server, "POST", "/json", body);
          if (status === 200) remaining.push(JSON.parse(text).statuses[0].limitRemaining);
          else failed.push(`${status} ${text}`);
        } catch (error) {
          failed.push(String(error));
        }
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, client));
    expect(failed).toEqual([]);
    // As if served one at a time: the n answers hold every remainder from the limit - 1 down to the limit - n, once.
    const descending = [...remaining].sort((a, b) => b - a);
    expect(descending).toEqual(Array.from({ length: remaining.length }, (_, i) => STEADY_LIMIT - 1 - i));
  }, 120_000);

  it("answers a long tail of 3000 keys never seen before, 40 at a time, each 200 with the OK body", async () => {
    const runtime = workerdProcesses(server);
    expect(runtime.length).toBeGreaterThan(0);
    // Requests wait in the Worker for seconds past COUNTER_OBJECT_ACTIVE_LIMIT while the proxy's other connections idle.
    const stopRefreshing = keepProxyConnectionsFresh(server);
    const answers: string[] = [];
    let next = 0;
    // A sender records a request nobody answered (send's bound) and goes on, so the tally names it.
    const sender = async () => {
      while (next < 3000) {
        const value = `tail-${next++}`;
        answers.push(await post(server, hit(value, "tail")).catch((error: Error) => error.message));
      }
    };
    await Promise.all(Array.from({ length: 40 }, sender)).finally(stopRefreshing);
    expect(answers.length).toBe(3000);
    expect(tally(answers)).toEqual({ [`200 ${okBody(1000000, "HOUR")}`]: 3000 });
    expect(workerdProcesses(server)).toEqual(runtime);
  }, 300_000);
});
