// The repeated-key scan of JSON text (plain Node): it finds a key an object gives twice, by its path, and nothing in
// any text JSON.stringify writes, whatever the strings and nesting.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repeatedJsonKey } from "../../src/shared/json-repeated-key";

describe("repeatedJsonKey", () => {
  it.each([
    ['{"a":1,"a":2}', "a"],
    ['{"a":1,"b":{"c":[1,{"d":0,"e":[],"d":1}]}}', "b.c[1].d"],
    ['[{}, 2, {"x":1,"x":1}]', "[2].x"],
    ['{"a":{"a":1},"a":2}', "a"],
    ['{"k":1, "\\u006b" :2}', "k"],
    ['{"q\\"":1,"q\\"":2}', 'q"'],
  ])("finds the repeated key of %s at %s", (text, path) => {
    expect(repeatedJsonKey(text)).toBe(path);
  });

  it.each([
    '{"a":{"a":1},"b":{"a":2}}',
    '[{"a":1},{"a":2}]',
    '[{},"a","a"]',
    '{"a":"\\"a\\":1,\\"a\\":2}","b":["a","a"]}',
    '{"a\\\\":1,"a":2}',
    "{}",
    '"a"',
  ])("finds none in %s", (text) => {
    expect(repeatedJsonKey(text)).toBeUndefined();
  });

  it("finds none in any text JSON.stringify writes", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, spaced) => {
        expect(repeatedJsonKey(JSON.stringify(value, null, spaced ? 1 : 0))).toBeUndefined();
      }),
    );
  });

  it("finds a key repeated at any depth, by its path", () => {
    const step = fc.oneof(
      fc.record({ key: fc.string({ maxLength: 4 }) }),
      fc.record({ before: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 2 }) }),
    );
    const repeated = fc.tuple(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }));
    fc.assert(
      fc.property(repeated, fc.array(step, { maxLength: 4 }), ([key, value], steps) => {
        let text = `{${JSON.stringify(key)}:${JSON.stringify(value)},${JSON.stringify(key)}:0}`;
        for (const wrap of [...steps].reverse()) {
          if ("key" in wrap) text = `{${JSON.stringify(wrap.key)}:${text}}`;
          else text = `[${wrap.before.map((item) => `${JSON.stringify(item)},`).join("")}${text}]`;
        }
        const names = [...steps.map((wrap) => ("key" in wrap ? wrap.key : wrap.before.length)), key];
        const path = names
          .map((name, at) => (typeof name === "number" ? `[${name}]` : at === 0 ? name : `.${name}`))
          .join("");
        expect(repeatedJsonKey(text)).toBe(path);
      }),
    );
  });
});
