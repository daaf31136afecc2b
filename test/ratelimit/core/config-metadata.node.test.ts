// A descriptor's metadata at load, as the reference reads it: yaml.v2's decoding (`!!binary` as its bytes, keys inside
// as their `%v` text, any number) and structpb.NewStruct's refusals, with each message's exact text.
import { describe, expect, it } from "vitest";
import { getLimit, loadConfig } from "../../../src/ratelimit/core/config";
import { descriptor } from "../../support/ratelimit-core";

/** A file whose one descriptor `k` carries this metadata block (indented under `metadata:`) and a rule. */
const withMetadata = (block: string) =>
  "domain: d\ndescriptors:\n  - key: k\n    metadata:\n" +
  block
    .split("\n")
    .filter(Boolean)
    .map((line) => `      ${line}\n`)
    .join("") +
  "    rate_limit:\n      unit: second\n      requests_per_unit: 1\n";

const load = (text: string) => loadConfig([{ name: "f.yaml", text }], { mergeDomainConfig: false });
const errorOf = (text: string) => {
  const result = load(text);
  return result.ok ? "loaded" : result.error.message;
};
const metadataOf = (block: string) => {
  const result = load(withMetadata(block));
  if (!result.ok) throw new Error(result.error.message);
  return getLimit(result.value, "d", descriptor(["k", "v"]))?.metadata;
};

describe("metadata that a Struct holds", () => {
  it("decodes a !!binary value or key that is UTF-8 to its text, as yaml.v2 does", () => {
    expect(
      metadataOf("greeting: !!binary aGVsbG8=\n? !!binary a2V5\n: 1\nblock: !!binary |\n  aMOp\n  bGxv\n"),
    ).toEqual({
      greeting: "hello",
      key: 1,
      block: "héllo",
    });
  });

  it("keeps infinite and not-a-number values, which structpb takes", () => {
    const metadata = metadataOf("up: .inf\ndown: -.inf\nnan: .nan\n");
    expect(metadata).toEqual({ up: Infinity, down: -Infinity, nan: NaN });
  });

  it("names the metadata map's own keys by their text, and inner keys as Go's %v prints them", () => {
    const text = "yes: 1\n~: 2\n0x10: 3\ninner:\n  yes: a\n  ~: b\n  0x10: c\n  1.50: d\n  2e6: e\n  no: f\n";
    expect(metadataOf(text)).toEqual({
      yes: 1,
      "": 2,
      "0x10": 3,
      inner: { true: "a", "<nil>": "b", "16": "c", "1.5": "d", "2e+06": "e", false: "f" },
    });
  });

  it("accepts a character above the basic plane written as one \\U escape", () => {
    expect(metadataOf('emoji: "\\U0001F600"\n')).toEqual({ emoji: "😀" });
  });
});

describe("metadata that a Struct cannot hold", () => {
  it.each([
    ["a !!binary value that is not UTF-8", "bad: !!binary /w==\n", '"\\xff"'],
    ["a !!binary value mixing text and bad bytes", "bad: !!binary aMOp/wo=\n", '"hé\\xff\\n"'],
    ["a !!binary key that is not UTF-8", "? !!binary /w==\n: 1\n", '"\\xff"'],
    ["a !!binary key inside", "inner:\n  ? !!binary /w==\n  : 1\n", '"\\xff"'],
    ["a !!binary value inside a list", "list:\n  - ok\n  - !!binary gA==\n", '"\\x80"'],
    ["control characters beside the bad byte", "bad: !!binary AH8J/w==\n", '"\\x00\\x7f\\t\\xff"'],
  ])("refuses %s with structpb's message", (_label, block, quoted) => {
    expect(errorOf(withMetadata(block))).toBe(
      `f.yaml: error parsing metadata: proto: invalid UTF-8 in string: ${quoted}`,
    );
  });

  it("refuses a lone surrogate that reaches the text itself (not as an escape) as bytes that are not UTF-8", () => {
    expect(errorOf(withMetadata("bad: a\ud800b\n"))).toBe(
      'f.yaml: error parsing metadata: proto: invalid UTF-8 in string: "a\\xed\\xa0\\x80b"',
    );
  });

  it("checks metadata after share_threshold, as the reference does", () => {
    const text =
      "domain: d\ndescriptors:\n  - key: k\n    value: v\n    share_threshold: true\n" +
      "    metadata:\n      bad: !!binary /w==\n";
    expect(errorOf(text)).toBe(
      "f.yaml: share_threshold can only be used with wildcard values (containing '*'), but found key 'k_v'",
    );
  });

  it("checks a descriptor's metadata before its children and later siblings", () => {
    const text =
      "domain: d\ndescriptors:\n  - key: a\n    metadata: {bad: !!binary gA==}\n" +
      "    descriptors:\n      - key: b\n        metadata: {bad: !!binary /w==}\n" +
      "  - key: a\n";
    expect(errorOf(text)).toBe('f.yaml: error parsing metadata: proto: invalid UTF-8 in string: "\\x80"');
  });
});

describe("YAML that yaml.v2 cannot read, in or out of metadata", () => {
  it.each([
    [
      "a list as a key",
      withMetadata("? [a, 1, ~, 1.5, true]\n: c\n"),
      'yaml: invalid map key: []interface {}{"a", 1, interface {}(nil), 1.5, true}',
    ],
    [
      "a map as a key",
      withMetadata("? {b: [x], a: 1}\n: c\n"),
      'yaml: invalid map key: map[interface {}]interface {}{"a":1, "b":[]interface {}{"x"}}',
    ],
    ["a list as a key outside metadata", "domain: d\n? [x]\n: 1\n", 'yaml: invalid map key: []interface {}{"x"}'],
    [
      "!!binary that is not base64",
      withMetadata("bad: !!binary '%%%'\n"),
      "yaml: !!binary value contains invalid base64 data",
    ],
    ["!!binary without its padding", "domain: !!binary ZA\n", "yaml: !!binary value contains invalid base64 data"],
    [
      "a surrogate escape",
      withMetadata('bad: "\\ud800"\n'),
      "yaml: line 5: found invalid Unicode character escape code",
    ],
    [
      "a surrogate pair written as two escapes",
      withMetadata('ok: "\\\\ud800"\nbad: "x\\uD83D\\uDE00"\n'),
      "yaml: line 6: found invalid Unicode character escape code",
    ],
    [
      "a surrogate escape on the first line",
      'domain: "\\udc00"\n',
      "yaml: found invalid Unicode character escape code",
    ],
  ])("refuses %s when the file is read", (_label, text, message) => {
    expect(errorOf(text)).toBe(`f.yaml: error loading config file: ${message}`);
  });

  it("reads a !!binary domain, key or value as its text", () => {
    const result = load("domain: !!binary ZA==\ndescriptors:\n  - !!binary a2V5: !!binary aw==\n    value: v\n");
    expect(result.ok && result.value.domains).toEqual(["d"]);
  });

  it("names a !!binary scalar by its tag where a field wants another type", () => {
    expect(errorOf("domain: d\ndescriptors:\n  - key: k\n    shadow_mode: !!binary dHJ1ZQ==\n")).toBe(
      "f.yaml: error loading config file: yaml: unmarshal errors:\n" +
        "  line 4: cannot unmarshal !!binary `dHJ1ZQ==` into bool",
    );
  });
});
