// The JSON output form of the proxy API: keys in code unit order, null fields dropped.
import { describe, expect, it } from "vitest";
import { canonical } from "../../../src/proxy/routes/json";

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
