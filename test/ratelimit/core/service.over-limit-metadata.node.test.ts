// RESPONSE_DYNAMIC_METADATA_OVER_LIMIT's `overLimit` in the dynamic metadata: the indices and entries of the
// descriptors that were over, so that Envoy can log which one tripped; absent when none was, and without the setting.
import { describe, expect, it } from "vitest";
import { harness, loadConfigText, request } from "../../support/ratelimit-core";

const CONFIG = loadConfigText(`
domain: m
descriptors:
  - key: a
    rate_limit:
      unit: hour
      requests_per_unit: 1
  - key: b
    rate_limit:
      unit: hour
      requests_per_unit: 5
  - key: q
    quota_mode: true
    rate_limit:
      unit: hour
      requests_per_unit: 0
`);

describe("dynamicMetadata.overLimit", () => {
  it("lists the descriptors that were over, with their entries, quota ones included", async () => {
    const h = harness(CONFIG, { dynamicMetadata: true, overLimitMetadata: true });
    const asked = request("m", [
      [["a", "1"]],
      [
        ["b", "2"],
        ["x", "y"],
      ],
      [["a", "1"]],
      [["q", "z"]],
    ]);
    const { response } = await h.run(asked, 1_800_000_000);
    expect(response.statuses.map((status) => status.code)).toEqual(["OK", "OK", "OVER_LIMIT", "OVER_LIMIT"]);
    expect(response.dynamicMetadata?.overLimit).toEqual([
      { index: 2, entries: ["a=1"] },
      { index: 3, entries: ["q=z"] },
    ]);
  });

  it("is absent without RESPONSE_DYNAMIC_METADATA_OVER_LIMIT, as upstream's metadata is", async () => {
    const h = harness(CONFIG, { dynamicMetadata: true });
    const { response } = await h.run(request("m", [[["q", "z"]]]), 1_800_000_000);
    expect(response.dynamicMetadata).toEqual({ domain: "m", descriptors: [{ entries: ["q=z"] }] });
  });

  it("is absent when nothing was over", async () => {
    const h = harness(CONFIG, { dynamicMetadata: true, overLimitMetadata: true });
    const { response } = await h.run(request("m", [[["b", "3"]]]), 1_800_000_000);
    expect(response.dynamicMetadata).toEqual({ domain: "m", descriptors: [{ entries: ["b=3"] }] });
  });
});
