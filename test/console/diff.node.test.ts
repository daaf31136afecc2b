// The console's line diff in plain Node: the smallest diff for edits within its bound (checked against a longest
// common subsequence computed here), and every old line removed and every new one added past the bound.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DIFF_MAX_EDITS, diffLines, type DiffLine } from "../../console/diff";

const text = (lines: string[]) => lines.join("\n");
const kinds = (lines: DiffLine[]) => lines.map((line) => `${line.kind} ${line.text}`);

/** The length of the longest common subsequence, by the textbook table: small inputs only. */
function commonLength(a: string[], b: string[]): number {
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
  return table[0][0];
}

describe("diffLines", () => {
  it("marks a changed line as removed then added between the unchanged ones", () => {
    expect(kinds(diffLines("a\nb\nc\n", "a\nx\nc\n"))).toEqual(["same a", "removed b", "added x", "same c"]);
    expect(kinds(diffLines("", "a\nb"))).toEqual(["added a", "added b"]);
    expect(kinds(diffLines("a\nb", ""))).toEqual(["removed a", "removed b"]);
    expect(diffLines("", "")).toEqual([]);
  });

  it("rebuilds both texts and keeps a longest common subsequence unchanged", () => {
    const lines = fc.array(fc.constantFrom("a", "b", "c", "d", ""), { maxLength: 30 });
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        // An empty last line is the text's final newline, which the diff does not show.
        const before = a.length > 0 && a.at(-1) === "" ? a.slice(0, -1) : a;
        const after = b.length > 0 && b.at(-1) === "" ? b.slice(0, -1) : b;
        const diff = diffLines(text(a), text(b));
        expect(diff.filter((line) => line.kind !== "added").map((line) => line.text)).toEqual(before);
        expect(diff.filter((line) => line.kind !== "removed").map((line) => line.text)).toEqual(after);
        expect(diff.filter((line) => line.kind === "same").length).toBe(commonLength(before, after));
      }),
      { numRuns: 500 },
    );
  });

  it("aligns up to its bound of edits and, past it, removes every old line and adds every new one", () => {
    const old = Array.from({ length: 2000 }, (_, index) => `line ${index}`);
    // Every other line changed: 1,000 removed and 1,000 added, twice the bound.
    const changed = old.map((line, index) => (index % 2 === 0 ? `${line} changed` : line));
    const coarse = diffLines(text(old), text(changed));
    expect(coarse.map((line) => line.kind)).toEqual([...old.map(() => "removed"), ...old.map(() => "added")]);
    // Half as many changes are exactly the bound, and are aligned: the unchanged lines stay.
    const within = old.map((line, index) => (index % 4 === 0 ? `${line} changed` : line));
    const aligned = diffLines(text(old), text(within));
    expect(aligned.filter((line) => line.kind === "removed").length).toBe(DIFF_MAX_EDITS / 2);
    expect(aligned.filter((line) => line.kind === "added").length).toBe(DIFF_MAX_EDITS / 2);
    expect(aligned.filter((line) => line.kind === "same").length).toBe(1500);
  });

  it("gives up on the worst input it was measured on rather than holding the tab", () => {
    const before = Array.from({ length: 20000 }, (_, index) => (index % 2 ? "x" : "y"));
    const after = Array.from({ length: 20000 }, (_, index) => (index % 3 ? "x" : "y"));
    const diff = diffLines(text(before), text(after));
    expect(diff.length).toBe(40000);
    expect(diff.filter((line) => line.kind === "same")).toEqual([]);
  });
});
