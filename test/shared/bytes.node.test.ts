// Cutting text and JSON lists into pieces of bounded UTF-8 size (src/shared/bytes.ts), as large files are stored in D1
// rows and large lists bound as D1 parameters.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonArrayPieces, utf8Pieces } from "../../src/shared/bytes";

const bytesOf = (text: string) => new TextEncoder().encode(text).length;

describe("utf8Pieces", () => {
  it("cuts at the byte bound, never inside a character", () => {
    expect(utf8Pieces("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    // "é" is 2 bytes and "😀" 4: a piece ends before a character that would not fit whole.
    expect(utf8Pieces("aé😀b", 4)).toEqual(["aé", "😀", "b"]);
    expect(utf8Pieces("", 4)).toEqual([""]);
    expect(() => utf8Pieces("a", 3)).toThrow(new RangeError("a piece holds at least 4 bytes"));
  });

  it("gives back the text joined, each piece within the bound and none empty", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), fc.integer({ min: 4, max: 64 }), (text, max) => {
        const pieces = utf8Pieces(text, max);
        expect(pieces.join("")).toBe(text);
        for (const piece of pieces) expect(bytesOf(piece)).toBeLessThanOrEqual(max);
        if (text !== "") expect(pieces.filter((piece) => piece === "")).toEqual([]);
        // Full pieces: only the last may be short of the bound by more than a character's 3 bytes.
        for (const piece of pieces.slice(0, -1)) expect(bytesOf(piece)).toBeGreaterThan(max - 4);
      }),
      { numRuns: 500 },
    );
  });
});

describe("jsonArrayPieces", () => {
  it("fills each array up to the byte bound, in order", () => {
    // ["ab","cd"] is 11 bytes, ["ab","cd","ef"] 16; "é" is 2 bytes.
    expect(jsonArrayPieces(["ab", "cd", "ef", "é"], 11)).toEqual(['["ab","cd"]', '["ef","é"]']);
    expect(jsonArrayPieces(["ab", "cd", "ef"], 16)).toEqual(['["ab","cd","ef"]']);
    expect(jsonArrayPieces([], 16)).toEqual([]);
    // A value larger than the bound on its own is alone in its array rather than lost.
    expect(jsonArrayPieces(["a", "x".repeat(20), "b"], 10)).toEqual(['["a"]', `["${"x".repeat(20)}"]`, '["b"]']);
  });

  it("gives back every value in order, each array within the bound and as full as the next value allows", () => {
    const value = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 20 }),
      fc.integer(),
      fc.dictionary(fc.string(), fc.string()),
    );
    fc.assert(
      fc.property(fc.array(value, { maxLength: 40 }), fc.integer({ min: 2, max: 200 }), (values, max) => {
        const pieces = jsonArrayPieces(values, max);
        const parsed = pieces.map((piece) => JSON.parse(piece) as unknown[]);
        expect(parsed.flat()).toEqual(values);
        pieces.forEach((piece, at) => {
          expect(parsed[at].length).toBeGreaterThan(0);
          if (parsed[at].length > 1) expect(bytesOf(piece)).toBeLessThanOrEqual(max);
          // The next array's first value did not fit in this one.
          if (at + 1 < pieces.length) {
            expect(bytesOf(piece) + bytesOf(JSON.stringify(parsed[at + 1][0])) + 1).toBeGreaterThan(max);
          }
        });
      }),
      { numRuns: 500 },
    );
  });
});
