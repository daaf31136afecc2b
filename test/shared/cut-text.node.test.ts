// cutText (src/shared/cut-text.ts): text past a length is cut to at most that length, with a marker saying how much
// went, never through a surrogate pair.
import { describe, expect, it } from "vitest";
import { cutText } from "../../src/shared/cut-text";

describe("cutText", () => {
  it("keeps text within the length as it is", () => {
    expect(cutText("a".repeat(200), 200)).toBe("a".repeat(200));
  });

  it("cuts longer text to at most the length, marker included", () => {
    expect(cutText("a".repeat(2000), 40)).toBe(`${"a".repeat(12)}… [1988 more characters cut]`);
    expect(cutText("a".repeat(2000), 40)).toHaveLength(40);
    // The marker is sized for the whole text's count: a shorter count leaves the result a character short.
    expect(cutText("a".repeat(1000), 40)).toBe(`${"a".repeat(12)}… [988 more characters cut]`);
  });

  it("never keeps half of a surrogate pair", () => {
    const text = `${"a".repeat(12)}${"😀".repeat(100)}`;
    expect(cutText(text, 40)).toBe(`${"a".repeat(12)}… [200 more characters cut]`);
  });
});
