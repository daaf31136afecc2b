// The JSON output form of the proxy API: keys in code unit order, null fields dropped; where extra warnings go.
import { describe, expect, it } from "vitest";
import { canonical, warningHeader, withWarnings } from "../../../src/proxy/routes/json";

describe("canonical", () => {
  it("sorts keys in code unit order at every depth and drops null and undefined fields", () => {
    const value = canonical({
      b: 1,
      FQLabel: "x",
      a: null,
      c: [{ z: undefined, y: 2, X: [null] }],
      d: { f: false, e: 0 },
    });
    expect(JSON.stringify(value)).toBe('{"FQLabel":"x","b":1,"c":[{"X":[null],"y":2}],"d":{"e":0,"f":false}}');
  });
});

describe("withWarnings", () => {
  it("appends to an object's warnings, adds the field to an object without, and to a list of warnings", () => {
    const extra = ['unknown field "x" ignored'];
    expect(withWarnings({ success: true, warnings: ["WARN: a"] }, extra)).toEqual({
      value: { success: true, warnings: ["WARN: a", 'unknown field "x" ignored'] },
      placed: true,
    });
    expect(withWarnings({ label: "p" }, extra)).toEqual({
      value: { label: "p", warnings: ['unknown field "x" ignored'] },
      placed: true,
    });
    expect(withWarnings([], extra)).toEqual({ value: ['unknown field "x" ignored'], placed: true });
  });

  it("leaves any other answer as it is, for the Warning header; and every answer without extra warnings", () => {
    const list = [{ label: "p" }];
    expect(withWarnings(list, ["w"])).toEqual({ value: list, placed: false });
    expect(withWarnings("text", ["w"])).toEqual({ value: "text", placed: false });
    const plain = { label: "p" };
    expect(withWarnings(plain, []).value).toBe(plain);
  });

  it("renders a Warning header value in ASCII", () => {
    expect(warningHeader('unknown field "é\n" ignored')).toBe('299 - "unknown field \\"\\u00e9\\n\\" ignored"');
  });
});
