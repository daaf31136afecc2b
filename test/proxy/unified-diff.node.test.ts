// The unified diff of the configuration previews: exact text for the usual cases (a changed line, a new and a removed
// file, hunks apart and merged, a missing final newline) and, for random texts, a patch that rebuilds the new text
// from the old with no more removed and added lines than the longest common subsequence leaves.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { unifiedDiff, unifiedFileDiff } from "../../src/proxy/unified-diff";

const lines = (count: number, prefix = "line") =>
  Array.from({ length: count }, (_, i) => `${prefix} ${i + 1}\n`).join("");

/** The lines of a text; a last one without its newline ends in NUL. */
function splitLines(text: string): string[] {
  if (text === "") return [];
  const parts = text.split("\n");
  const last = parts.pop()!;
  return last === "" ? parts : [...parts, `${last}\u0000`];
}

/** Applies a unified diff of one file to `before` (as `patch` would), checking every context and removed line. */
function applyPatch(before: string, diff: string): string {
  const oldLines = splitLines(before);
  const result: string[] = [];
  let cursor = 0;
  const rows = diff.split("\n").slice(2, -1);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    const next = rows[i + 1];
    const noNewline = next === "\\ No newline at end of file";
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@$/.exec(row);
    if (hunk) {
      const start = hunk[2] === "0" ? Number(hunk[1]) : Number(hunk[1]) - 1;
      while (cursor < start) result.push(oldLines[cursor++]);
      continue;
    }
    if (row === "\\ No newline at end of file") continue;
    const text = row.slice(1) + (noNewline ? "\u0000" : "");
    if (row[0] === "+") result.push(text);
    else {
      expect(oldLines[cursor]).toBe(text);
      if (row[0] === " ") result.push(text);
      cursor++;
    }
  }
  while (cursor < oldLines.length) result.push(oldLines[cursor++]);
  return result.map((line) => (line.endsWith("\u0000") ? line.slice(0, -1) : `${line}\n`)).join("");
}

function lcsLength(a: string[], b: string[]): number {
  const row = new Array(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = 0;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = a[i - 1] === b[j - 1] ? diagonal + 1 : Math.max(row[j], row[j - 1]);
      diagonal = above;
    }
  }
  return row[b.length];
}

describe("unifiedFileDiff", () => {
  it("is empty for equal texts", () => {
    expect(unifiedFileDiff("x", "a\n", "a\n")).toBe("");
    expect(unifiedDiff({ a: "1\n", b: "2\n" }, { b: "2\n", a: "1\n" })).toBe("");
  });

  it("shows a changed line with three lines of context", () => {
    const before = lines(10);
    const after = before.replace("line 5\n", "line five\n");
    expect(unifiedFileDiff("haproxy.cfg", before, after)).toBe(
      [
        "--- a/haproxy.cfg",
        "+++ b/haproxy.cfg",
        "@@ -2,7 +2,7 @@",
        " line 2",
        " line 3",
        " line 4",
        "-line 5",
        "+line five",
        " line 6",
        " line 7",
        " line 8",
        "",
      ].join("\n"),
    );
  });

  it("keeps changes far apart in their own hunks and merges close ones", () => {
    const before = lines(20);
    const apart = before.replace("line 2\n", "line two\n").replace("line 18\n", "");
    expect(unifiedFileDiff("f", before, apart)).toBe(
      [
        "--- a/f",
        "+++ b/f",
        "@@ -1,5 +1,5 @@",
        " line 1",
        "-line 2",
        "+line two",
        " line 3",
        " line 4",
        " line 5",
        "@@ -15,6 +15,5 @@",
        " line 15",
        " line 16",
        " line 17",
        "-line 18",
        " line 19",
        " line 20",
        "",
      ].join("\n"),
    );
    const close = before.replace("line 5\n", "line 5\nnew\n").replace("line 11\n", "");
    expect(unifiedFileDiff("f", before, close)).toBe(
      [
        "--- a/f",
        "+++ b/f",
        "@@ -3,12 +3,12 @@",
        " line 3",
        " line 4",
        " line 5",
        "+new",
        " line 6",
        " line 7",
        " line 8",
        " line 9",
        " line 10",
        "-line 11",
        " line 12",
        " line 13",
        " line 14",
        "",
      ].join("\n"),
    );
  });

  it("writes a new file against /dev/null and a removed one to it", () => {
    expect(unifiedDiff({}, { "new.map": "a b\n" })).toBe("--- /dev/null\n+++ b/new.map\n@@ -0,0 +1 @@\n+a b\n");
    expect(unifiedDiff({ "old.map": "a b\nc d\n" }, {})).toBe(
      "--- a/old.map\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a b\n-c d\n",
    );
  });

  it("marks a last line without its newline", () => {
    expect(unifiedFileDiff("f", "a\nb", "a\nb\n")).toBe(
      "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
    );
  });

  it("lists the files in name order", () => {
    expect(unifiedDiff({ b: "1\n", a: "1\n" }, { b: "2\n", a: "2\n" })).toBe(
      "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-1\n+2\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-1\n+2\n",
    );
  });

  it("rebuilds the new text from the old with a shortest edit script (random texts)", () => {
    const text = fc
      .array(fc.constantFrom("a", "b", "c", "d", ""), { maxLength: 30 })
      .chain((parts) => fc.boolean().map((newline) => (parts.length ? parts.join("\n") + (newline ? "\n" : "") : "")));
    fc.assert(
      fc.property(text, text, (before, after) => {
        const diff = unifiedFileDiff("f", before, after);
        if (before === after) return diff === "";
        expect(applyPatch(before, diff)).toBe(after);
        const a = splitLines(before);
        const b = splitLines(after);
        const changes = diff.split("\n").filter((row) => /^[-+](?![-+]{2} )/.test(row)).length;
        expect(changes).toBe(a.length + b.length - 2 * lcsLength(a, b));
        return true;
      }),
      { numRuns: 500, seed: 21 },
    );
  });
});
