// The walk that names a JSON body's fields its schema does not know: through wrappers, pipes, arrays and records,
// never into an object that takes any key; and the warnings' limits.
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { unknownFields, unknownFieldWarnings } from "../../../src/shared/http/unknown-fields";

describe("unknownFields", () => {
  it("names unknown keys at every depth, through optional, nullable, default, transforms and preprocessing", () => {
    const schema = z.object({
      a: z
        .string()
        .trim()
        .transform((text) => text.length),
      list: z.array(z.object({ b: z.number().default(1) })).nullish(),
      byName: z.record(z.string(), z.object({ c: z.boolean() })).optional(),
      pre: z.preprocess((value) => value, z.object({ d: z.string() })),
    });
    const body = {
      a: "x",
      e: 1,
      list: [{ b: 1 }, { b: 2, f: 2 }],
      byName: { one: { c: true, g: 3 } },
      pre: { d: "", h: 4 },
    };
    expect(schema.safeParse(body).success).toBe(true);
    expect(unknownFields(schema, body)).toEqual({
      named: ["e", "list.1.f", "byName.one.g", "pre.h"],
      total: 4,
    });
  });

  it("finds none in objects that take any key, and none where the value is not an object", () => {
    const schema = z.object({ loose: z.looseObject({}), strict: z.strictObject({}), n: z.unknown() });
    expect(unknownFields(schema, { loose: { x: 1 }, strict: {}, n: { y: 1 } })).toEqual({ named: [], total: 0 });
    expect(unknownFields(z.object({ a: z.object({}).nullish() }), { a: null })).toEqual({ named: [], total: 0 });
  });

  it("names at most ten and counts them all", () => {
    const body = Object.fromEntries(Array.from({ length: 25 }, (_, index) => [`k${index}`, index]));
    const found = unknownFields(z.object({}), body);
    expect(found.total).toBe(25);
    expect(found.named).toEqual(Array.from({ length: 10 }, (_, index) => `k${index}`));
    expect(unknownFieldWarnings(found).slice(-1)).toEqual(["... and 15 more unknown fields ignored"]);
    expect(unknownFieldWarnings({ named: ["a"], total: 2 })).toEqual([
      'unknown field "a" ignored',
      "... and 1 more unknown field ignored",
    ]);
  });

  it("quotes a name as JSON, cut after 100 characters", () => {
    expect(unknownFieldWarnings({ named: ['a"\n', "z".repeat(101)], total: 2 })).toEqual([
      'unknown field "a\\"\\n" ignored',
      `unknown field "${"z".repeat(100)}…" ignored`,
    ]);
  });
});
