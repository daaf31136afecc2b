// The service's settings reach the decisions in the real Worker: global shadow mode, response headers,
// stop-increment, the local over-limit cache and the cache key prefix (which names the Durable Objects).
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { descriptor } from "../support/ratelimit-calls";
import { atNowWithConfig, NOW } from "../support/ratelimit-decision-suite";
import { okStatus, overStatus } from "../support/ratelimit-statuses";

const CONFIG = `
domain: wiring
descriptors:
  - key: two
    rate_limit:
      unit: day
      requests_per_unit: 2
  - key: ten
    rate_limit:
      unit: hour
      requests_per_unit: 10
  - key: twenty
    rate_limit:
      unit: minute
      requests_per_unit: 20
  - key: old
    rate_limit:
      name: old_rule
      unit: day
      requests_per_unit: 1
  - key: new
    rate_limit:
      replaces:
        - name: old_rule
      unit: day
      requests_per_unit: 3
`;

// NOW is 2030-01-01T00:00:30Z; its day window starts at 1893456000.
const DAY_START = 1893456000;

atNowWithConfig({ "wiring.yaml": CONFIG });

/** A Worker whose env carries these variables; the same object is reused, as one isolate would. */
function workerWith(vars: Record<string, string>) {
  const varsEnv = { ...env, ...vars } as Env;
  return async (body: unknown) => {
    const response = await worker.fetch(
      new Request("http://example.com/json", { method: "POST", body: JSON.stringify(body) }),
      varsEnv,
      createExecutionContext(),
    );
    return { status: response.status, body: (await response.json()) as any };
  };
}

const DAY = 86400;
const HOUR = 3600;

/** The counter `key` (name + window start) of a window `windowSeconds` long, read from its object. */
const counter = (name: string, key: string, windowSeconds: number) =>
  env.RATE_LIMIT_COUNTER.getByName(name)
    .read([{ key, hits: 0, windowEnd: Number(key.slice(name.length)) + windowSeconds, windowSeconds }])
    .then(([n]) => n);

describe("settings in the Worker", () => {
  it("SHADOW_MODE answers OK overall while the statuses keep OVER_LIMIT", async () => {
    const send = workerWith({ SHADOW_MODE: "true" });
    const request = { domain: "wiring", descriptors: [descriptor(["two", "shadowed"])] };
    await send(request);
    await send(request);
    const third = await send(request);
    expect(third).toEqual({
      status: 200,
      body: {
        overallCode: "OK",
        statuses: [overStatus(2, "DAY", "86370s")],
      },
    });
  });

  it("LIMIT_RESPONSE_HEADERS_ENABLED adds the headers of the tightest limit, under the configured names", async () => {
    const send = workerWith({ LIMIT_RESPONSE_HEADERS_ENABLED: "TRUE", LIMIT_RESET_HEADER: "X-Reset" });
    const answer = await send({
      domain: "wiring",
      descriptors: [descriptor(["ten", "h"]), descriptor(["twenty", "h"])],
    });
    expect(answer.body.responseHeadersToAdd).toEqual([
      { key: "RateLimit-Limit", value: "10" },
      { key: "RateLimit-Remaining", value: "9" },
      { key: "X-Reset", value: "3570" },
    ]);
    const off = await workerWith({})({ domain: "wiring", descriptors: [descriptor(["ten", "h2"])] });
    expect(off.body.responseHeadersToAdd).toBeUndefined();
  });

  it("STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT leaves the other descriptors' counters alone", async () => {
    const send = workerWith({ STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: "1" });
    const request = { domain: "wiring", descriptors: [descriptor(["two", "stop"]), descriptor(["ten", "stop"])] };
    const remaining = [];
    for (let i = 0; i < 4; i++) remaining.push((await send(request)).body.statuses[1].limitRemaining);
    expect(remaining).toEqual([9, 8, 8, 8]);
    expect(await counter("wiring_ten_stop_", `wiring_ten_stop_${DAY_START}`, HOUR)).toBe(2);
  });

  it("LocalCacheSizeInBytes answers known over-limit keys without reaching their counter", async () => {
    const send = workerWith({ LocalCacheSizeInBytes: "10000" });
    const request = { domain: "wiring", descriptors: [descriptor(["two", "cached"])] };
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await send(request)).status);
    expect(codes).toEqual([200, 200, 429, 429, 429]);
    // The third request went over and was remembered; the fourth and fifth never reached the object.
    expect(await counter("wiring_two_cached_", `wiring_two_cached_${DAY_START}`, DAY)).toBe(3);
    const uncached = workerWith({ LocalCacheSizeInBytes: "0" });
    await uncached(request);
    expect(await counter("wiring_two_cached_", `wiring_two_cached_${DAY_START}`, DAY)).toBe(4);
  });

  it("CACHE_KEY_PREFIX prefixes the cache keys and so the objects' names", async () => {
    const send = workerWith({ CACHE_KEY_PREFIX: "tenant1:" });
    await send({ domain: "wiring", descriptors: [descriptor(["two", "prefixed"])] });
    expect(await counter("tenant1:wiring_two_prefixed_", `tenant1:wiring_two_prefixed_${DAY_START}`, DAY)).toBe(1);
    expect(await counter("wiring_two_prefixed_", `wiring_two_prefixed_${DAY_START}`, DAY)).toBe(0);
  });

  it("replaces drops the replaced rule without touching its counter", async () => {
    const send = workerWith({});
    const answer = await send({ domain: "wiring", descriptors: [descriptor(["old", "r"]), descriptor(["new", "r"])] });
    expect(answer.body.statuses).toEqual([{ code: "OK" }, okStatus(3, "DAY", 2, "86370s")]);
    expect(await counter("wiring_old_r_", `wiring_old_r_${DAY_START}`, DAY)).toBe(0);
  });

  it("hitsAddend counts several hits, and an explicit descriptor 0 only checks", async () => {
    const send = workerWith({});
    const many = await send({ domain: "wiring", hitsAddend: 4, descriptors: [descriptor(["ten", "hits"])] });
    expect(many.body.statuses[0].limitRemaining).toBe(6);
    const peek = await send({ domain: "wiring", descriptors: [{ ...descriptor(["ten", "hits"]), hitsAddend: "0" }] });
    expect(peek.body.statuses[0].limitRemaining).toBe(6);
    expect(await counter("wiring_ten_hits_", `wiring_ten_hits_${Math.floor(NOW / 1000 / 3600) * 3600}`, HOUR)).toBe(4);
  });
});
