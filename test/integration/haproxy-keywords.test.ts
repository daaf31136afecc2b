// The generated table of HAProxy's keywords (src/proxy/haproxy-params/haproxy-keywords.ts) against the haproxy
// installed here: the committed module must be exactly what scripts/generate-haproxy-keywords.mjs reads from it.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OUTPUT, haproxyVersion, readKeywords, renderModule } from "../../scripts/generate-haproxy-keywords.mjs";
import { HAPROXY_KEYWORDS_VERSION } from "../../src/proxy/haproxy-params/haproxy-keywords";
import { requireBinary } from "../support/system-programs.mjs";

describe("the generated HAProxy keyword table", () => {
  it("was read from the haproxy installed here, and has not drifted from it", async () => {
    requireBinary("haproxy");
    expect(haproxyVersion()).toBe(HAPROXY_KEYWORDS_VERSION);
    // On a difference: `node scripts/generate-haproxy-keywords.mjs`, then review what changed.
    expect(await renderModule(readKeywords())).toBe(readFileSync(OUTPUT, "utf8"));
  });
});
