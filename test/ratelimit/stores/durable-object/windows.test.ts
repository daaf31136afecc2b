// Several windows on one descriptor (additional_limits) with the Durable Object store, per-key and sharded: the shared
// suite (test/support/ratelimit-windows-suite.ts), every window of a descriptor held by the descriptor's one object;
// with COUNTER_LEASES on, such descriptors are still counted per request, exactly.
import { env } from "cloudflare:workers";
import { describe } from "vitest";
import { shardName } from "../../../../src/ratelimit/core/counter-shards";
import { atNowWithConfig } from "../../../support/ratelimit-decision-suite";
import { workerWith } from "../../../support/ratelimit-stores";
import { WINDOWS_CONFIG, windowsSuite } from "../../../support/ratelimit-windows-suite";

// NOW's minute starts here.
const MINUTE_START = 1893456000;

/** The minute window's count of a `burst` value, read from the object that holds the descriptor's windows. */
const minuteCount = (prefix: string, objectOf: (name: string) => string) => async (value: string) => {
  const counterName = `${prefix}win_burst_${value}_`;
  const key = `${counterName}${MINUTE_START}_w1`;
  const object = env.RATE_LIMIT_COUNTER.getByName(objectOf(counterName));
  const [count] = await object.read([{ key, hits: 0, windowEnd: MINUTE_START + 60, windowSeconds: 60 }]);
  return count as number;
};

atNowWithConfig({ "win.yaml": WINDOWS_CONFIG });

describe("several windows, one object per key", () => {
  windowsSuite(
    workerWith({ CACHE_KEY_PREFIX: "wpk_" }).rateLimit,
    minuteCount("wpk_", (name) => name),
  );
});

describe("several windows, sharded objects", () => {
  windowsSuite(
    workerWith({ COUNTER_OBJECT_LAYOUT: "sharded", COUNTER_OBJECT_SHARDS: "4", CACHE_KEY_PREFIX: "wsh_" }).rateLimit,
    minuteCount("wsh_", (name) => shardName(name, 4)),
  );
});

describe("several windows with COUNTER_LEASES on: never leased, still exact", () => {
  windowsSuite(
    workerWith({ COUNTER_LEASES: "true", CACHE_KEY_PREFIX: "wls_" }).rateLimit,
    minuteCount("wls_", (name) => name),
  );
});
