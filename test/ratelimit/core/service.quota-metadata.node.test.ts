// Upstream's newest decision rules over the in-memory store: quota mode (per rule and QUOTA_MODE) and the response's
// dynamic metadata (RESPONSE_DYNAMIC_METADATA).
import { describe, expect, it } from "vitest";
import type { RateLimitRequest } from "../../../src/ratelimit/core/types";
import { descriptor, harness, loadFixtures, request } from "../../support/ratelimit-core";
import { GOLD_BEFORE_SILVER_METADATA } from "../../support/ratelimit-rules";
import { decidedStatus, NO_LIMIT_STATUS, UNLIMITED_STATUS } from "../../support/ratelimit-statuses";

const quota = loadFixtures(["quota.yaml"]);
const meta = loadFixtures(["metadata.yaml"]);
const HEADERS = { limit: "RateLimit-Limit", remaining: "RateLimit-Remaining", reset: "RateLimit-Reset" };

/** Runs a request twice on a fresh store (every limit of quota.yaml is 1 a minute, but `wide`: 5) and returns the second. */
async function secondOf(pairs: [string, string][][], settings = {}) {
  const h = harness(quota, settings);
  await h.run(request("quota", pairs));
  return (await h.run(request("quota", pairs))).response;
}

describe("quota mode", () => {
  it("fails the request when its only quota descriptor is over", async () => {
    const response = await secondOf([[["plan", "a"]]]);
    expect(response.overallCode).toBe("OVER_LIMIT");
    expect(response.statuses.map((s) => s.code)).toEqual(["OVER_LIMIT"]);
  });

  it("passes while another quota descriptor is under, keeping the over one's status", async () => {
    const h = harness(quota);
    await h.run(request("quota", [[["plan", "b"]]]));
    const { response } = await h.run(request("quota", [[["plan", "b"]], [["addon", "b"]]]));
    expect(response.overallCode).toBe("OK");
    expect(response.statuses).toEqual([
      decidedStatus("OVER_LIMIT", 1, "MINUTE", 0, 26),
      decidedStatus("OK", 1, "MINUTE", 0, 26),
    ]);
  });

  it("fails when every quota descriptor is over", async () => {
    const response = await secondOf([[["plan", "c"]], [["addon", "c"]]]);
    expect(response.overallCode).toBe("OVER_LIMIT");
  });

  it("fails when a descriptor that is not a quota is over, whatever the quotas say", async () => {
    const h = harness(quota);
    await h.run(request("quota", [[["api", "d"]]]));
    const { response } = await h.run(request("quota", [[["api", "d"]], [["addon", "d"]]]));
    expect(response.overallCode).toBe("OVER_LIMIT");
    expect(response.statuses.map((s) => s.code)).toEqual(["OVER_LIMIT", "OK"]);
  });

  it("fails with an over quota and a passing descriptor that is not a quota (every quota failed)", async () => {
    const h = harness(quota);
    await h.run(request("quota", [[["plan", "e"]]]));
    const { response } = await h.run(request("quota", [[["plan", "e"]], [["wide", "e"]]]));
    expect(response.overallCode).toBe("OVER_LIMIT");
  });

  it("QUOTA_MODE makes every descriptor but unlimited ones a quota, even one without a rule", async () => {
    const pairs: [string, string][][] = [[["api", "f"]], [["unknown", "f"]]];
    expect((await secondOf(pairs, { quotaMode: true })).overallCode).toBe("OK");
    expect((await secondOf(pairs, { quotaMode: false })).overallCode).toBe("OVER_LIMIT");
    // An unlimited descriptor is no quota, so the over one is the only quota, and fails the request.
    expect((await secondOf([[["api", "g"]], [["free", "g"]]], { quotaMode: true })).overallCode).toBe("OVER_LIMIT");
  });

  it("lets global shadow mode win over a failed quota", async () => {
    const response = await secondOf([[["plan", "h"]]], { shadowMode: true });
    expect(response.overallCode).toBe("OK");
    expect(response.statuses[0].code).toBe("OVER_LIMIT");
  });

  it("does not let an over quota take the headers from an over descriptor that is not a quota", async () => {
    const h = harness(quota, { responseHeaders: HEADERS });
    for (let i = 0; i < 5; i++) await h.run(request("quota", [[["wide", "i"]]]));
    await h.run(request("quota", [[["plan", "i"]]]));
    const { response } = await h.run(request("quota", [[["wide", "i"]], [["plan", "i"]]]));
    expect(response.statuses.map((s) => s.code)).toEqual(["OVER_LIMIT", "OVER_LIMIT"]);
    expect(response.responseHeadersToAdd).toEqual([
      { key: "RateLimit-Limit", value: "5" },
      { key: "RateLimit-Remaining", value: "0" },
      { key: "RateLimit-Reset", value: "26" },
    ]);
  });
});

describe("dynamic metadata", () => {
  it("is absent unless enabled", async () => {
    const { response } = await harness(meta).run(request("meta", [[["user", "u"]]]));
    expect(response.dynamicMetadata).toBeUndefined();
  });

  it("describes the request and merges the passing rules' metadata, the first value winning", async () => {
    const req: RateLimitRequest = {
      domain: "meta",
      descriptors: [
        descriptor(["user", "u1"]),
        { ...descriptor(["team", "t1"], ["x", ""]), hitsAddend: 0 },
        descriptor(["team", "t2"]),
        { ...descriptor(["blocked", "b"]), limit: { requestsPerUnit: 7, unit: "HOUR" } },
        descriptor(["open", "o"]),
        descriptor(["unknown", "n"]),
      ],
      hitsAddend: 1,
    };
    const { response } = await harness(meta, { dynamicMetadata: true }).run(req);
    expect(response.dynamicMetadata).toEqual({
      domain: "meta",
      descriptors: [
        { entries: ["user=u1"] },
        { entries: ["team=t1", "x="], hitsAddend: 0 },
        { entries: ["team=t2"] },
        { entries: ["blocked=b"], limit: "requests_per_unit:7 unit:HOUR" },
        { entries: ["open=o"] },
        { entries: ["unknown=n"] },
      ],
      hitsAddend: 1,
      // The silver rule (team) also says free: yes.
      metadata: { ...GOLD_BEFORE_SILVER_METADATA, free: true },
    });
  });

  it("leaves out an unlimited descriptor's metadata, even the first one's, as the reference does", async () => {
    const { response } = await harness(meta, { dynamicMetadata: true }).run(
      request("meta", [[["open", "o"]], [["user", "u2"]]]),
    );
    expect(response.statuses).toEqual([UNLIMITED_STATUS, decidedStatus("OK", 2, "MINUTE", 1, 26)]);
    expect(response.dynamicMetadata).toEqual({
      domain: "meta",
      descriptors: [{ entries: ["open=o"] }, { entries: ["user=u2"] }],
      metadata: { tier: "gold", limits: { daily: 100 }, tags: ["a", "b"] },
    });
  });

  it("leaves out the metadata of a rule another replaces, keeping the replacing rule's", async () => {
    const { response } = await harness(meta, { dynamicMetadata: true }).run(
      request("meta", [[["standard", "s"]], [["premium", "s"]]]),
    );
    expect(response.statuses.map((s) => [s.code, s.currentLimit?.name])).toEqual([
      ["OK", undefined],
      ["OK", "premium"],
    ]);
    expect(response.statuses[0]).toEqual(NO_LIMIT_STATUS);
    expect(response.dynamicMetadata).toEqual({
      domain: "meta",
      descriptors: [{ entries: ["standard=s"] }, { entries: ["premium=s"] }],
      metadata: { tier: "platinum", premium: true },
    });
  });

  it("answers no metadata when the only rules are an unlimited one and the one it replaces", async () => {
    const { response } = await harness(meta, { dynamicMetadata: true }).run(
      request("meta", [[["standard", "v"]], [["vip", "v"]]]),
    );
    expect(response.statuses).toEqual([NO_LIMIT_STATUS, UNLIMITED_STATUS]);
    expect(response.dynamicMetadata).toEqual({
      domain: "meta",
      descriptors: [{ entries: ["standard=v"] }, { entries: ["vip=v"] }],
    });
  });

  it("answers a named unlimited rule that another replaces as unlimited, and no quota under QUOTA_MODE", async () => {
    const h = harness(meta, { dynamicMetadata: true, quotaMode: true });
    const { response } = await h.run(request("meta", [[["blocked", "q"]], [["free", "q"]], [["lift", "q"]]]));
    // free is set aside as unlimited before lift's replaces could drop it: blocked (0 a minute, over) is then the
    // only quota, and fails the request.
    expect(response.overallCode).toBe("OVER_LIMIT");
    expect(response.statuses).toEqual([
      decidedStatus("OVER_LIMIT", 0, "MINUTE", 0, 26),
      UNLIMITED_STATUS,
      UNLIMITED_STATUS,
    ]);
    expect(response.dynamicMetadata).toEqual({
      domain: "meta",
      descriptors: [{ entries: ["blocked=q"] }, { entries: ["free=q"] }, { entries: ["lift=q"] }],
    });
  });

  it("leaves out the metadata of descriptors that did not pass, and the request's hits when 0", async () => {
    const h = harness(meta, { dynamicMetadata: true });
    await h.run(request("meta", [[["team", "t3"]]]));
    const { response } = await h.run(request("meta", [[["team", "t3"]], [["blocked", "b"]]]));
    expect(response.statuses.map((s) => s.code)).toEqual(["OVER_LIMIT", "OVER_LIMIT"]);
    expect(response.dynamicMetadata).toEqual({
      domain: "meta",
      descriptors: [{ entries: ["team=t3"] }, { entries: ["blocked=b"] }],
    });
  });
});
