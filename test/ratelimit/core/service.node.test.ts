// shouldRateLimit end to end over the in-memory store: the spec's decision rules 1-13, hits, overrides,
// request errors and store failures.

import { describe, expect, it } from "vitest";
import { shouldRateLimit, UNLIMITED_REMAINING } from "../../../src/ratelimit/core/service";
import { PublicStoreError, type RateLimitRequest } from "../../../src/ratelimit/core/types";
import { DEFAULT_SETTINGS, descriptor, harness, loadFixtures, request } from "../../support/ratelimit-core";
import { MemoryStore } from "../../support/ratelimit-memory-store";
import { decidedStatus, NO_LIMIT_STATUS, UNLIMITED_STATUS } from "../../support/ratelimit-statuses";

const basic = loadFixtures(["basic.yaml"]);
/** Seconds from 1234, the harness's default time, to the end of its minute. */
const MINUTE_AT_1234 = 26;
/** The store item of one hit on `counterName` in the minute of 1234 (1200 to 1260). */
const hitInMinuteOf1234 = (counterName: string) => ({
  key: `${counterName}1200`,
  counterName,
  hits: 1,
  windowEnd: 1260,
  windowSeconds: 60,
  perSecond: false,
});

describe("shouldRateLimit: request validation", () => {
  const deps = { config: basic, store: new MemoryStore(), settings: DEFAULT_SETTINGS };

  it("refuses an empty domain", async () => {
    expect(await shouldRateLimit(deps, request("", [[["key2", "x"]]]), 1234)).toEqual({
      ok: false,
      error: { kind: "service", message: "rate limit domain must not be empty" },
    });
  });

  it("refuses an empty descriptor list", async () => {
    expect(await shouldRateLimit(deps, request("test-domain", []), 1234)).toEqual({
      ok: false,
      error: { kind: "service", message: "rate limit descriptor list must not be empty" },
    });
  });

  it("refuses to answer without a configuration", async () => {
    expect(await shouldRateLimit({ ...deps, config: undefined }, request("test-domain", [[["key2", "x"]]]), 1)).toEqual(
      {
        ok: false,
        error: { kind: "service", message: "no rate limit configuration loaded" },
      },
    );
  });

  it("refuses an override without a unit, naming the descriptor", async () => {
    const req: RateLimitRequest = {
      domain: "test-domain",
      descriptors: [
        descriptor(["key2", "x"]),
        { ...descriptor(["key3", "y"]), limit: { requestsPerUnit: 5, unit: "UNKNOWN" } },
      ],
      hitsAddend: 0,
    };
    expect(await shouldRateLimit(deps, req, 1234)).toEqual({
      ok: false,
      error: { kind: "service", message: "descriptor 1: limit override needs a unit" },
    });
  });

  it("answers OK to an override without a unit on a domain it does not know, as the reference does", async () => {
    const req: RateLimitRequest = {
      domain: "other-domain",
      descriptors: [{ ...descriptor(["a", "x"]), limit: { requestsPerUnit: 1, unit: "UNKNOWN" } }],
      hitsAddend: 0,
    };
    const decided = await shouldRateLimit(deps, req, 1234);
    expect(decided.ok && decided.value.response).toEqual({
      overallCode: "OK",
      statuses: [{ code: "OK", limitRemaining: 0 }],
      responseHeadersToAdd: [],
    });
    expect(decided.ok && decided.value.stats.domainNotFound).toBe(1);
  });

  it("turns a store failure into an error value", async () => {
    const store = new MemoryStore();
    store.failure = new Error("CLUSTERDOWN The cluster is down");
    expect(await shouldRateLimit({ ...deps, store }, request("test-domain", [[["key2", "x"]]]), 1234)).toEqual({
      ok: false,
      error: { kind: "store", message: "CLUSTERDOWN The cluster is down" },
    });
  });

  it("gives callers the text of a store failure the service composed itself, and of no other", async () => {
    const store = new MemoryStore();
    store.failure = new PublicStoreError("too many counter objects");
    const failed = await shouldRateLimit({ ...deps, store }, request("test-domain", [[["key2", "x"]]]), 1234);
    expect(failed).toStrictEqual({
      ok: false,
      error: { kind: "store", message: "too many counter objects", shown: "too many counter objects" },
    });
    store.failure = new Error("internal error");
    const hidden = await shouldRateLimit({ ...deps, store }, request("test-domain", [[["key2", "x"]]]), 1234);
    expect(hidden).toStrictEqual({ ok: false, error: { kind: "store", message: "internal error" } });
  });

  it("treats a store reply of the wrong length as a store failure", async () => {
    const store = { increment: async () => [], get: async () => [] };
    expect(await shouldRateLimit({ ...deps, store }, request("test-domain", [[["key2", "x"]]]), 1234)).toEqual({
      ok: false,
      error: { kind: "store", message: "counter store returned 0 values for 1 counters" },
    });
  });
});

describe("shouldRateLimit: decisions", () => {
  it("counts a key-only rule and reports limit, remaining and reset", async () => {
    const h = harness(basic);
    const decision = await h.run(request("test-domain", [[["key2", "x"]]]));
    expect(decision.response).toEqual({
      overallCode: "OK",
      statuses: [decidedStatus("OK", 20, "MINUTE", 19, MINUTE_AT_1234)],
      responseHeadersToAdd: [],
    });
    expect(h.store.calls).toEqual([
      {
        method: "increment",
        items: [hitInMinuteOf1234("test-domain_key2_x_")],
      },
    ]);
  });

  it("answers OK without a limit or a store call for whitelisted and unmatched descriptors (rule 1)", async () => {
    const h = harness(basic);
    const decision = await h.run(request("test-domain", [[["key2", "value3"]], [["nothing", "here"]], []]));
    expect(decision.response.statuses).toEqual([NO_LIMIT_STATUS, NO_LIMIT_STATUS, NO_LIMIT_STATUS]);
    expect(decision.response.overallCode).toBe("OK");
    expect(h.store.calls).toEqual([]);
    expect(decision.stats.rules).toEqual([]);
  });

  it("answers one OK per descriptor for an unknown domain and counts domain_not_found", async () => {
    const h = harness(basic);
    const decision = await h.run(request("foo_domain", [[["key2", "x"]], [["key3", "y"]]]));
    expect(decision.response.statuses).toEqual([NO_LIMIT_STATUS, NO_LIMIT_STATUS]);
    expect(decision.stats).toEqual({ rules: [], domainNotFound: 2, globalShadowMode: 0 });
    expect(h.store.calls).toEqual([]);
  });

  it("matches only configuration at the request's depth (rule 2)", async () => {
    const h = harness(basic);
    const decision = await h.run(
      request("test-domain", [
        [
          ["key2", "x"],
          ["extra", "entry"],
        ],
        [
          ["key1", "value1"],
          ["subkey1", "s"],
        ],
      ]),
    );
    expect(decision.response.statuses.map((s) => s.currentLimit?.requestsPerUnit)).toEqual([undefined, 5]);
  });

  it("prefers key plus value to key only (rule 3)", async () => {
    const h = harness(basic);
    const decision = await h.run(request("test-domain", [[["key2", "value2"]], [["key2", "other"]]]));
    expect(decision.response.statuses.map((s) => [s.currentLimit?.requestsPerUnit, s.limitRemaining])).toEqual([
      [30, 29],
      [20, 19],
    ]);
  });

  it("gives each runtime value of a key-only rule its own counter (rule 4)", async () => {
    const h = harness(basic);
    await h.run(request("test-domain", [[["key2", "a"]]]));
    await h.run(request("test-domain", [[["key2", "a"]]]));
    const decision = await h.run(request("test-domain", [[["key2", "b"]]]));
    expect(decision.response.statuses[0].limitRemaining).toBe(19);
    expect(h.store.value("test-domain_key2_a_1200")).toBe(2);
    expect(h.store.value("test-domain_key2_b_1200")).toBe(1);
  });

  it("gives each value matching a wildcard its own counter (rule 5)", async () => {
    const h = harness(loadFixtures(["wildcard.yaml"]));
    await h.run(request("wildcard", [[["path", "/api/a"]]]));
    await h.run(request("wildcard", [[["path", "/api/b"]]]));
    expect([...h.store.counters.keys()]).toEqual(["wildcard_path_/api/a_1200", "wildcard_path_/api/b_1200"]);
  });

  it("shares one counter between all values matching a share_threshold wildcard (rule 6)", async () => {
    const h = harness(loadFixtures(["share-threshold.yaml"]));
    for (const file of ["files/a.pdf", "files/b.pdf", "files/c.pdf"]) {
      const decision = await h.run(request("share", [[["files", file]]]));
      expect(decision.response.overallCode).toBe("OK");
    }
    const decision = await h.run(request("share", [[["files", "files/d.csv"]]]));
    expect(decision.response.overallCode).toBe("OVER_LIMIT");
    expect([...h.store.counters]).toEqual([["share_files_files/*_1200", 4]]);
    expect(decision.stats.rules[0].key).toBe("share.files_files/*");
  });

  it("is OVER_LIMIT overall when any descriptor is (rule 7) and still counts over-limit hits", async () => {
    const h = harness(basic);
    await h.run(request("test-domain", [[["key3", "x"]]]));
    const decision = await h.run(request("test-domain", [[["key2", "x"]], [["key3", "x"]]]));
    expect(decision.response.overallCode).toBe("OVER_LIMIT");
    expect(decision.response.statuses).toEqual([
      decidedStatus("OK", 20, "MINUTE", 19, MINUTE_AT_1234),
      decidedStatus("OVER_LIMIT", 1, "HOUR", 0, 2366),
    ]);
    await h.run(request("test-domain", [[["key3", "x"]]]));
    expect(h.store.value("test-domain_key3_x_0")).toBe(3);
  });

  it("answers OK with the largest uint32 for unlimited rules, without the store (rule 8)", async () => {
    const h = harness(basic);
    const decision = await h.run(request("test-domain", [[["key6", "x"]]]));
    expect(decision.response.statuses).toEqual([UNLIMITED_STATUS]);
    expect(UNLIMITED_REMAINING).toBe(4294967295);
    expect(h.store.calls).toEqual([]);
    expect(decision.stats.rules).toEqual([]);
  });

  // The zero-hit check differs from the reference (OK there): docs/ratelimit.md lists it among the deviations.
  it("always answers OVER_LIMIT for requests_per_unit 0 (rule 9)", async () => {
    const h = harness(basic);
    const decision = await h.run(request("test-domain", [[["key8", "x"]]]));
    expect(decision.response.statuses).toEqual([decidedStatus("OVER_LIMIT", 0, "MINUTE", 0, MINUTE_AT_1234)]);
    const check = await h.run({
      ...request("test-domain", []),
      descriptors: [{ ...descriptor(["key8", "y"]), hitsAddend: 0 }],
    });
    expect(check.response.statuses[0].code).toBe("OVER_LIMIT");
  });

  it("copies the rule name into the current limit", async () => {
    const h = harness(basic);
    const decision = await h.run(request("test-domain", [[["key9", "x"]]], 0), 1000000);
    expect(decision.response.statuses[0]).toEqual(decidedStatus("OK", 9, "WEEK", 8, 209600, "weekly"));
  });
});

describe("shouldRateLimit: replaces (rule 10)", () => {
  const config = loadFixtures(["replaces.yaml"]);
  const specific: [string, string][] = [
    ["key_1", "value_1"],
    ["user", "bkthomps"],
  ];
  const replacing: [string, string][] = [
    ["key_2", "value_2"],
    ["user", "bkthomps"],
  ];

  it("applies the named rule alone", async () => {
    const h = harness(config);
    const decision = await h.run(request("replaces", [specific]));
    expect(decision.response.statuses[0]).toMatchObject({
      currentLimit: { name: "specific_limit", requestsPerUnit: 5, unit: "SECOND" },
      limitRemaining: 4,
    });
  });

  it("drops the replaced rule and leaves its counter untouched", async () => {
    const h = harness(config);
    const decision = await h.run(request("replaces", [specific, replacing]));
    expect(decision.response.statuses).toEqual([NO_LIMIT_STATUS, decidedStatus("OK", 10, "SECOND", 9, 1)]);
    expect([...h.store.counters.keys()]).toEqual(["replaces_key_2_value_2_user_bkthomps_1234"]);
    expect(decision.stats.rules.map((r) => r.key)).toEqual(["replaces.key_2_value_2.user_bkthomps"]);
  });

  it("drops both rules when two rules replace each other", async () => {
    const h = harness(config);
    const decision = await h.run(request("replaces", [[["ping", "1"]], [["pong", "2"]]]));
    expect(decision.response.statuses).toEqual([NO_LIMIT_STATUS, NO_LIMIT_STATUS]);
    expect(h.store.calls).toEqual([]);
  });

  it("lets an unlimited rule replace a limited one", async () => {
    const h = harness(config);
    const decision = await h.run(request("replaces", [specific, [["free", "x"]]]));
    expect(decision.response.statuses).toEqual([NO_LIMIT_STATUS, UNLIMITED_STATUS]);
    expect(h.store.calls).toEqual([]);
  });
});

describe("shouldRateLimit: shadow mode (rules 11 and 12)", () => {
  const config = loadFixtures(["shadow.yaml"]);

  it("answers OK for an over-limit shadow rule but keeps counting and statistics", async () => {
    const h = harness(config);
    await h.run(request("shadow", [[["user", "user-a"]]]));
    const decision = await h.run(request("shadow", [[["user", "user-a"]]]));
    expect(decision.response).toEqual({
      overallCode: "OK",
      statuses: [decidedStatus("OK", 1, "SECOND", 0, 1)],
      responseHeadersToAdd: [],
    });
    expect(h.store.value("shadow_user_user-a_1234")).toBe(2);
    expect(decision.stats.rules).toEqual([
      {
        key: "shadow.user_user-a",
        totalHits: 1,
        overLimit: 1,
        nearLimit: 0,
        withinLimit: 0,
        shadowMode: 1,
        overLimitWithLocalCache: 0,
      },
    ]);
  });

  it("rewrites only the overall code in global shadow mode", async () => {
    const h = harness(config, { shadowMode: true });
    await h.run(request("shadow", [[["user", "user-b"]]]));
    const decision = await h.run(request("shadow", [[["user", "user-b"]]]));
    expect(decision.response.overallCode).toBe("OK");
    expect(decision.response.statuses[0].code).toBe("OVER_LIMIT");
    expect(decision.stats.globalShadowMode).toBe(1);
    expect(decision.stats.rules[0].overLimit).toBe(1);
  });

  it("does not count global shadow mode when nothing was over the limit", async () => {
    const h = harness(config, { shadowMode: true });
    const decision = await h.run(request("shadow", [[["user", "user-b"]]]));
    expect(decision.stats.globalShadowMode).toBe(0);
  });
});

describe("shouldRateLimit: hits", () => {
  it("adds the request's hitsAddend, 0 meaning 1", async () => {
    const h = harness(basic);
    expect((await h.run(request("test-domain", [[["key2", "x"]]], 5))).response.statuses[0].limitRemaining).toBe(15);
    expect((await h.run(request("test-domain", [[["key2", "x"]]], 0))).response.statuses[0].limitRemaining).toBe(14);
    expect(h.store.calls.map((call) => call.items[0].hits)).toEqual([5, 1]);
  });

  it("lets a descriptor's own hitsAddend win over the request's", async () => {
    const h = harness(basic);
    const req: RateLimitRequest = {
      domain: "test-domain",
      descriptors: [{ ...descriptor(["key2", "x"]), hitsAddend: 3 }, descriptor(["key2", "y"])],
      hitsAddend: 5,
    };
    const decision = await h.run(req);
    expect(decision.response.statuses.map((s) => s.limitRemaining)).toEqual([17, 15]);
  });

  it("checks without counting when a descriptor's hitsAddend is an explicit 0", async () => {
    const h = harness(basic);
    await h.run(request("test-domain", [[["key2", "x"]]], 4));
    const decision = await h.run({
      domain: "test-domain",
      descriptors: [{ ...descriptor(["key2", "x"]), hitsAddend: 0 }],
      hitsAddend: 7,
    });
    expect(decision.response.statuses[0].limitRemaining).toBe(16);
    expect(h.store.value("test-domain_key2_x_1200")).toBe(4);
    expect(decision.stats.rules[0]).toMatchObject({ totalHits: 0, withinLimit: 0, overLimit: 0 });
  });

  it("lands exactly on the limit with OK and 0 remaining, then goes over", async () => {
    const h = harness(basic);
    expect((await h.run(request("test-domain", [[["key2", "x"]]], 20))).response.statuses[0]).toMatchObject({
      code: "OK",
      limitRemaining: 0,
    });
    expect((await h.run(request("test-domain", [[["key2", "x"]]]))).response.statuses[0].code).toBe("OVER_LIMIT");
  });
});

describe("shouldRateLimit: limit overrides", () => {
  it("applies a request override and shares the counter of the same unit", async () => {
    const h = harness(basic);
    await h.run(request("test-domain", [[["key2", "x"]]]));
    const decision = await h.run({
      domain: "test-domain",
      descriptors: [{ ...descriptor(["key2", "x"]), limit: { requestsPerUnit: 2, unit: "MINUTE" } }],
      hitsAddend: 0,
    });
    expect(decision.response.statuses[0]).toEqual(decidedStatus("OK", 2, "MINUTE", 0, MINUTE_AT_1234));
    expect(decision.stats.rules[0].key).toBe("test-domain.key2_x");
  });

  it("ignores a valid override on an unknown domain", async () => {
    const h = harness(basic);
    const decision = await h.run({
      domain: "foo_domain",
      descriptors: [{ ...descriptor(["key2", "x"]), limit: { requestsPerUnit: 2, unit: "MINUTE" } }],
      hitsAddend: 0,
    });
    expect(decision.response.statuses).toEqual([NO_LIMIT_STATUS]);
  });
});

describe("shouldRateLimit: store calls", () => {
  it("sends every counted descriptor in one increment call", async () => {
    const h = harness(basic);
    await h.run(request("test-domain", [[["key2", "x"]], [["key6", "x"]], [["key3", "y"]], [["key4", "z"]]]));
    expect(h.store.calls.map((call) => [call.method, call.items.map((item) => item.key)])).toEqual([
      ["increment", ["test-domain_key2_x_1200", "test-domain_key3_y_0", "test-domain_key4_z_0"]],
    ]);
  });

  it("counts the same key twice when two descriptors render it", async () => {
    const h = harness(basic);
    const decision = await h.run(request("test-domain", [[["key2", "x"]], [["key2", "x"]]]));
    expect(decision.response.statuses.map((s) => s.limitRemaining)).toEqual([19, 18]);
  });

  it("uses the cache key prefix", async () => {
    const h = harness(basic, { cacheKeyPrefix: "prefix:" });
    await h.run(request("test-domain", [[["key2", "x"]]]));
    expect(h.store.calls[0].items[0]).toEqual(hitInMinuteOf1234("prefix:test-domain_key2_x_"));
  });

  it("starts a new counter in the next window", async () => {
    const h = harness(basic);
    await h.run(request("test-domain", [[["key3", "x"]]]), 3599);
    expect((await h.run(request("test-domain", [[["key3", "x"]]]), 3599)).response.overallCode).toBe("OVER_LIMIT");
    const next = await h.run(request("test-domain", [[["key3", "x"]]]), 3600);
    expect(next.response.statuses[0]).toMatchObject({ code: "OK", durationUntilResetSeconds: 3600 });
  });
});
