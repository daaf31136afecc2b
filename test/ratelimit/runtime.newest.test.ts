// Upstream's newest settings reach the decisions in the real Worker: QUOTA_MODE (global shadow mode still winning
// over it) and RESPONSE_DYNAMIC_METADATA, whose `dynamicMetadata` /json answers exactly (no metadata of unlimited or
// replaced rules, as the reference), and not at all when off.
import { describe, expect, it } from "vitest";
import { descriptor } from "../support/ratelimit-calls";
import { atNowWithConfig } from "../support/ratelimit-decision-suite";
import { GOLD_BEFORE_SILVER_METADATA } from "../support/ratelimit-rules";
import { workerWith } from "../support/ratelimit-stores";
import { okStatus, overStatus } from "../support/ratelimit-statuses";

const CONFIG = `
domain: newest
descriptors:
  - key: plan
    metadata:
      tier: gold
      limits:
        daily: 100
      tags: [a, b]
    rate_limit:
      unit: hour
      requests_per_unit: 1
  - key: addon
    metadata:
      tier: silver
      limits:
        daily: 1
        monthly: 5
      ratio: 0.5
      nothing: ~
    rate_limit:
      unit: hour
      requests_per_unit: 1
  - key: free
    metadata:
      open: true
    rate_limit:
      unlimited: true
  - key: blocked
    metadata:
      reason: never
    rate_limit:
      unit: day
      requests_per_unit: 0
  - key: standard
    metadata:
      tier: bronze
      standard: true
    rate_limit:
      name: standard
      unit: hour
      requests_per_unit: 5
  - key: premium
    metadata:
      premium: true
    rate_limit:
      unit: hour
      requests_per_unit: 5
      replaces:
        - name: standard
`;

// At NOW, 2030-01-01T00:00:30Z: 30 s into the hour and the day.
atNowWithConfig({ "newest.yaml": CONFIG });

const planOk = okStatus(1, "HOUR", 0, "3570s");
const planOver = overStatus(1, "HOUR", "3570s");

describe("QUOTA_MODE in the Worker", () => {
  it("makes every descriptor but unlimited ones a quota: one over no longer fails the request", async () => {
    const quota = workerWith({ QUOTA_MODE: "true" });
    const request = (who: string) => ({
      domain: "newest",
      descriptors: [descriptor(["plan", who]), descriptor(["unknown", who])],
    });
    await quota.rateLimit(request("quota-on"));
    // plan is over; the descriptor without a rule is a quota too, and it passed.
    const passed = await quota.rateLimit(request("quota-on"));
    expect([passed.status, passed.body]).toEqual([200, { overallCode: "OK", statuses: [planOver, { code: "OK" }] }]);

    const plain = workerWith({});
    await plain.rateLimit(request("quota-off"));
    const failed = await plain.rateLimit(request("quota-off"));
    expect([failed.status, failed.body]).toEqual([
      429,
      { overallCode: "OVER_LIMIT", statuses: [planOver, { code: "OK" }] },
    ]);

    // An unlimited descriptor is no quota: plan is the only one, and it failed.
    const unlimited = { domain: "newest", descriptors: [descriptor(["plan", "quota-on"]), descriptor(["free", "f"])] };
    const alone = await quota.rateLimit(unlimited);
    expect([alone.status, alone.body]).toEqual([
      429,
      { overallCode: "OVER_LIMIT", statuses: [planOver, { code: "OK", limitRemaining: 4294967295 }] },
    ]);
  });

  it("lets SHADOW_MODE answer OK over a failed quota, the status still OVER_LIMIT", async () => {
    const send = workerWith({ QUOTA_MODE: "true", SHADOW_MODE: "true" }).rateLimit;
    const request = { domain: "newest", descriptors: [descriptor(["plan", "shadowed"])] };
    await send(request);
    const answer = await send(request);
    expect([answer.status, answer.body]).toEqual([200, { overallCode: "OK", statuses: [planOver] }]);
  });
});

describe("RESPONSE_DYNAMIC_METADATA in the Worker", () => {
  it("answers the request and the passing rules' metadata merged, the first value winning", async () => {
    const send = workerWith({ RESPONSE_DYNAMIC_METADATA: "true" }).rateLimit;
    const answer = await send({
      domain: "newest",
      hitsAddend: 1,
      descriptors: [
        descriptor(["plan", "m1"]),
        { ...descriptor(["addon", "m1"]), hitsAddend: 0 },
        { ...descriptor(["blocked", "m1"]), limit: { requestsPerUnit: 7, unit: "HOUR" } },
        descriptor(["free", "m1"]),
        { entries: [{ key: "unknown", value: "m1" }, { key: "x" }] },
      ],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      overallCode: "OK",
      statuses: [
        planOk,
        { ...planOk, limitRemaining: 1 },
        okStatus(7, "HOUR", 6, "3570s"),
        { code: "OK", limitRemaining: 4294967295 },
        { code: "OK" },
      ],
      dynamicMetadata: {
        domain: "newest",
        descriptors: [
          { entries: ["plan=m1"] },
          { entries: ["addon=m1"], hitsAddend: 0 },
          // An override bypasses the rule, and with it the rule's metadata.
          { entries: ["blocked=m1"], limit: "requests_per_unit:7 unit:HOUR" },
          { entries: ["free=m1"] },
          { entries: ["unknown=m1", "x="] },
        ],
        hitsAddend: 1,
        metadata: GOLD_BEFORE_SILVER_METADATA,
      },
    });
  });

  it("omits the metadata of an unlimited rule and of a replaced one, although both answer OK", async () => {
    const send = workerWith({ RESPONSE_DYNAMIC_METADATA: "true" }).rateLimit;
    const answer = await send({
      domain: "newest",
      descriptors: [descriptor(["free", "m3"]), descriptor(["standard", "m3"]), descriptor(["premium", "m3"])],
    });
    expect([answer.status, answer.body]).toEqual([
      200,
      {
        overallCode: "OK",
        statuses: [{ code: "OK", limitRemaining: 4294967295 }, { code: "OK" }, okStatus(5, "HOUR", 4, "3570s")],
        dynamicMetadata: {
          domain: "newest",
          descriptors: [{ entries: ["free=m3"] }, { entries: ["standard=m3"] }, { entries: ["premium=m3"] }],
          metadata: { premium: true },
        },
      },
    ]);
  });

  it("omits the metadata of descriptors that did not pass, even when quota mode passes the request", async () => {
    const send = workerWith({ RESPONSE_DYNAMIC_METADATA: "true", QUOTA_MODE: "true" }).rateLimit;
    await send({ domain: "newest", descriptors: [descriptor(["plan", "m2"])] });
    const answer = await send({
      domain: "newest",
      descriptors: [descriptor(["plan", "m2"]), descriptor(["addon", "m2"])],
    });
    expect([answer.status, answer.body]).toEqual([
      200,
      {
        overallCode: "OK",
        statuses: [planOver, planOk],
        dynamicMetadata: {
          domain: "newest",
          descriptors: [{ entries: ["plan=m2"] }, { entries: ["addon=m2"] }],
          metadata: { tier: "silver", limits: { daily: 1, monthly: 5 }, ratio: 0.5, nothing: null },
        },
      },
    ]);
    const blocked = await send({ domain: "newest", descriptors: [descriptor(["blocked", "m2"])] });
    expect([blocked.status, blocked.body]).toEqual([
      429,
      {
        overallCode: "OVER_LIMIT",
        statuses: [overStatus(0, "DAY", "86370s")],
        dynamicMetadata: { domain: "newest", descriptors: [{ entries: ["blocked=m2"] }] },
      },
    ]);
  });

  it.each([
    ["unset", {}],
    ["false", { RESPONSE_DYNAMIC_METADATA: "false" }],
  ])("answers no dynamicMetadata when the setting is %s", async (_label, vars) => {
    const answer = await workerWith(vars).rateLimit({
      domain: "newest",
      hitsAddend: 1,
      descriptors: [descriptor(["free", "off"])],
    });
    expect(answer.body).toEqual({ overallCode: "OK", statuses: [{ code: "OK", limitRemaining: 4294967295 }] });
  });
});
