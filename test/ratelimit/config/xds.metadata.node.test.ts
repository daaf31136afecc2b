// The xDS form's metadata: a Struct in proto3 JSON keeps every key and value through the YAML it becomes, and one a
// Struct cannot hold (a lone surrogate, which JSON can carry) is refused with the YAML form's message.
import { describe, expect, it } from "vitest";
import { getLimit, loadConfig } from "../../../src/ratelimit/core/config";
import { xdsConfigsToFiles } from "../../../src/ratelimit/config/xds";
import { descriptor } from "../../support/ratelimit-core";

const resourceWith = (metadata: unknown) => ({
  name: "meta-config",
  domain: "meta",
  descriptors: [{ key: "k", metadata, rateLimit: { unit: "SECOND", requestsPerUnit: 1 } }],
});

describe("xDS metadata", () => {
  it("keeps keys and strings that YAML 1.1 would read as other types, and any character, as the Struct had them", () => {
    const metadata = {
      yes: "no",
      "~": "1.5",
      "0x10": ["true", null, 2.5, false],
      "0o10": ["0o10", "0X1F", "-0b1", "1:30"],
      inner: { "": "😀", control: "\u0000\u0007", quote: '"\\' },
    };
    const files = xdsConfigsToFiles([resourceWith(metadata)]);
    if (!files.ok) throw new Error(files.error);
    const config = loadConfig(files.value, { mergeDomainConfig: false });
    if (!config.ok) throw new Error(config.error.message);
    expect(getLimit(config.value, "meta", descriptor(["k", "v"]))?.metadata).toEqual(metadata);
  });

  it.each([
    ["a string value", { tier: "x\ud800y" }, '"x\\xed\\xa0\\x80y"'],
    ["a key inside", { inner: { ["\udc00"]: 1 } }, '"\\xed\\xb0\\x80"'],
    ["a string in a list", { list: ["ok", "\ud83d"] }, '"\\xed\\xa0\\xbd"'],
  ])("refuses a lone surrogate in %s with structpb's message, naming the resource", (_label, metadata, quoted) => {
    expect(xdsConfigsToFiles([resourceWith(metadata)])).toEqual({
      ok: false,
      error: `meta-config: error parsing metadata: proto: invalid UTF-8 in string: ${quoted}`,
    });
  });
});
