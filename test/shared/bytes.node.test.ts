// Cutting text into pieces of bounded UTF-8 size (src/shared/bytes.ts), as large files are stored in D1 rows.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utf8Pieces } from "../../src/shared/bytes";

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
