// The rate limit service's statistics through the real Worker: exact names and values after known request
// sequences on /json and gRPC, service-level counters, and when isolates flush (never per request), DISABLE_STATS and
// the log sink. Each test uses its own env object (its own isolate buffer) and its own domains; the aggregate is
// shared by the file, so service-level counters are compared before and after.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { AggregatePart } from "../../../src/ratelimit/stats/buffer";
import { RATELIMIT_ADMIN, statDelta } from "../../support/ratelimit-calls";
import { expectedRuleStats, STATS_CONFIG, statsSequence } from "../../support/ratelimit-stats-fixture";
import {
  frozenDate,
  LOAD_ERROR,
  LOAD_SUCCESS,
  REDIS_ERROR,
  RESPONSE_TIME,
  service,
  SERVICE_ERROR,
  simpleConfig,
  TOTAL_REQUESTS,
} from "./telemetry-fixtures";

frozenDate();

const only = (stats: Record<string, number>, ...fragments: string[]) =>
  Object.fromEntries(Object.entries(stats).filter(([name]) => fragments.some((fragment) => name.includes(fragment))));

describe("statistics of known request sequences", () => {
  it("counts every rule statistic exactly over /json (near, over, shadow, replaces, detailed_metric, value_to_metric)", async () => {
    const s = service();
    const before = await s.stats();
    expect((await s.put({ "seq.yaml": STATS_CONFIG("seq") })).status).toBe(200);
    const steps = statsSequence("seq", "seq-unknown");
    const statuses: number[] = [];
    for (const step of steps) statuses.push(await s.json(step.domain, step.descriptors));
    expect(statuses).toEqual(steps.map((step) => (step.code === "OK" ? 200 : 429)));

    const after = await s.stats();
    expect(only(after, ".seq.", ".seq-unknown.")).toEqual(expectedRuleStats("seq", "seq-unknown"));
    expect(statDelta(before, after, TOTAL_REQUESTS)).toBe(steps.length);
    expect(statDelta(before, after, RESPONSE_TIME)).toBe(steps.length);
    expect(statDelta(before, after, LOAD_SUCCESS)).toBe(1);
    expect(statDelta(before, after, SERVICE_ERROR)).toBe(0);
  });

  it("counts gRPC (Connect) calls under the same names as /json", async () => {
    const s = service();
    const before = await s.stats();
    expect((await s.put({ "rpc.yaml": STATS_CONFIG("rpc") })).status).toBe(200);
    const steps = statsSequence("rpc", "rpc-unknown");
    const codes: (string | undefined)[] = [];
    for (const step of steps) codes.push((await s.grpc(step.domain, step.descriptors)).body.overallCode);
    expect(codes).toEqual(steps.map((step) => step.code));
    const after = await s.stats();
    expect(only(after, ".rpc.", ".rpc-unknown.")).toEqual(expectedRuleStats("rpc", "rpc-unknown"));
    expect(statDelta(before, after, TOTAL_REQUESTS)).toBe(steps.length);
  });

  it("counts global shadow mode overrides", async () => {
    const s = service({ SHADOW_MODE: "true" });
    expect((await s.put({ "g.yaml": simpleConfig("gshadow") })).status).toBe(200);
    const before = await s.stats();
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push(await s.json("gshadow", [[["k", "v"]]]));
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const after = await s.stats();
    expect(statDelta(before, after, "ratelimit.service.global_shadow_mode")).toBe(3);
    expect(after["ratelimit.service.rate_limit.gshadow.k.over_limit"]).toBe(3);
  });

  it("counts service errors and counter store errors by type", async () => {
    const s = service();
    const before = await s.stats();
    expect(await s.json("", [[["k", "v"]]])).toBe(400);
    expect(await s.json("errors", [])).toBe(400);
    const failing = service({
      RATE_LIMIT_COUNTER: {
        getByName: () => ({
          increment: async () => {
            throw new Error("store down");
          },
        }),
      },
    });
    vi.spyOn(console, "error").mockImplementation(() => {});
    expect((await failing.put({ "e.yaml": simpleConfig("errors") })).status).toBe(200);
    expect(await failing.json("errors", [[["k", "v"]]])).toBe(500);
    await failing.stats();
    const after = await s.stats();
    expect(statDelta(before, after, SERVICE_ERROR)).toBe(2);
    expect(statDelta(before, after, REDIS_ERROR)).toBe(1);
    expect(statDelta(before, after, TOTAL_REQUESTS)).toBe(3);
    expect(after["ratelimit.service.rate_limit.errors.k.total_hits"]).toBeUndefined();
  });

  it("counts configuration loads: a refused set, an accepted one, and an isolate loading the stored set", async () => {
    const s = service();
    const before = await s.stats();
    const refused = await s.put({
      "bad.yaml":
        "domain: loads\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: fortnight\n      requests_per_unit: 1\n",
    });
    expect(refused).toEqual({ status: 400, body: "bad.yaml: invalid rate limit unit 'fortnight'" });
    expect((await s.put({ "loads.yaml": simpleConfig("loads") })).status).toBe(200);
    // Another env is another view of the configuration: its first decision loads the stored set.
    const other = service();
    expect(await other.json("loads", [[["k", "v"]]])).toBe(200);
    await other.stats();
    const after = await s.stats();
    expect(statDelta(before, after, LOAD_ERROR)).toBe(1);
    expect(statDelta(before, after, LOAD_SUCCESS)).toBe(2);
  });
});

describe("flushing", () => {
  const domainSnapshot = (domain: string) => env.RATE_LIMIT_STATS.getByName(`domain:${domain}`).snapshot();

  /** Installs `domain` (100 an hour) on `s` and sends it `hits` hits; asserts none has reached the aggregate yet. */
  async function hitUnflushed(s: ReturnType<typeof service>, domain: string, hits: number) {
    expect((await s.put({ [`${domain}.yaml`]: simpleConfig(domain, 100) })).status).toBe(200);
    for (let i = 0; i < hits; i++) expect(await s.json(domain, [[["k", "v"]]])).toBe(200);
    expect((await domainSnapshot(domain)).rules).toEqual({});
  }

  it("writes nothing to the aggregate per request: statistics wait in the isolate until a flush", async () => {
    const s = service();
    await hitUnflushed(s, "buffered", 3);
    await s.stats();
    expect((await domainSnapshot("buffered")).rules).toEqual({ "buffered.k": [3, 0, 0, 3, 0, 0] });
  });

  it("flushes everything buffered in one batch at the end of the interval, from the first call's waitUntil", async () => {
    // The aggregate's parts as the isolate delivers them: four flushes would leave the same totals as one.
    const parts: AggregatePart[] = [];
    const stats = env.RATE_LIMIT_STATS;
    const recording = {
      getByName: (name: string) => ({
        add: (part: AggregatePart) => (parts.push(part), stats.getByName(name).add(part)),
        snapshot: () => stats.getByName(name).snapshot(),
      }),
    };
    const s = service({ STATS_FLUSH_INTERVAL: "2s", RATE_LIMIT_STATS: recording });
    await hitUnflushed(s, "timed", 4);
    // The first call (the PUT, which recorded the configuration load) holds the timer in its waitUntil.
    await s.settleCall(0);
    expect(parts.map((part) => part.target).sort()).toEqual(["domain:timed", "service"]);
    expect(new Set(parts.map((part) => part.id)).size).toBe(1);
    expect((await domainSnapshot("timed")).rules).toEqual({ "timed.k": [4, 0, 0, 4, 0, 0] });
    await s.settle();
    expect(parts).toHaveLength(2);
  });

  it("flushes at the end of every call with STATS_FLUSH_INTERVAL=0", async () => {
    const s = service({ STATS_FLUSH_INTERVAL: "0" });
    expect((await s.put({ "eager.yaml": simpleConfig("eager", 100) })).status).toBe(200);
    expect(await s.json("eager", [[["k", "v"]]])).toBe(200);
    await s.settle();
    expect((await domainSnapshot("eager")).rules).toEqual({ "eager.k": [1, 0, 0, 1, 0, 0] });
    expect(await s.json("eager", [[["k", "v"]]])).toBe(200);
    await s.settle();
    expect((await domainSnapshot("eager")).rules).toEqual({ "eager.k": [2, 0, 0, 2, 0, 0] });
  });

  it("DISABLE_STATS records, flushes and serves nothing", async () => {
    const s = service({ DISABLE_STATS: "true", STATS_FLUSH_INTERVAL: "0" });
    expect((await s.put({ "off.yaml": simpleConfig("off") })).status).toBe(200);
    const serviceBefore = await env.RATE_LIMIT_STATS.getByName("service").snapshot();
    expect(await s.json("off", [[["k", "v"]]])).toBe(200);
    await s.settle();
    expect(await s.statsText()).toBe("");
    const metrics = await s.fetch("/metrics", { headers: RATELIMIT_ADMIN });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toBe("");
    expect((await domainSnapshot("off")).rules).toEqual({});
    expect((await env.RATE_LIMIT_STATS.getByName("service").snapshot()).counters[TOTAL_REQUESTS]).toBe(
      serviceBefore.counters[TOTAL_REQUESTS],
    );
  });

  it("writes each flush's changes to the log when USE_METRICSD=false and pull metrics are off", async () => {
    const s = service({
      USE_METRICSD: "false",
      USE_PULLMETRICS: "false",
      STATS_FLUSH_INTERVAL: "0",
      EXTRA_TAGS: "env:test",
    });
    expect((await s.put({ "logged.yaml": simpleConfig("logged") })).status).toBe(200);
    await s.settle();
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    expect(await s.json("logged", [[["k", "v"]]])).toBe(200);
    await s.settle();
    const lines = log.mock.calls
      .map(([line]) => JSON.parse(String(line)))
      .filter((line) => line["@message"] === "ratelimit: statistics");
    expect(lines).toEqual([
      {
        "@timestamp": "2030-01-01T00:00:30.000Z",
        level: "info",
        "@message": "ratelimit: statistics",
        stats: {
          "ratelimit.service.rate_limit.logged.k.total_hits.__env=test": 1,
          "ratelimit.service.rate_limit.logged.k.within_limit.__env=test": 1,
          "ratelimit_server.ShouldRateLimit.response_time.__env=test": { count: 1, sum_ms: 0 },
          "ratelimit_server.ShouldRateLimit.total_requests.__env=test": 1,
        },
      },
    ]);
  });
});
