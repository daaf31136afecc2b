// Unified diffs (as `diff -u` and git write them) between two sets of text files, by Myers' shortest edit script
// over lines. Pure: the configuration previews show with it what a generation would change.

type Edit = { op: " " | "-" | "+"; line: string };

/** Beyond this many differing lines the middle is shown as removed and re-added whole (memory stays bounded). */
const MAX_EDIT_DISTANCE = 2000;
const CONTEXT = 3;

/** The shortest edit script from `a` to `b` (Myers 1986), each step keeping, removing or adding one line. */
function editScript(a: readonly string[], b: readonly string[]): Edit[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const keep = (lines: readonly string[]): Edit[] => lines.map((line) => ({ op: " ", line }));
  return [...keep(a.slice(0, start)), ...middle(a.slice(start, endA), b.slice(start, endB)), ...keep(a.slice(endA))];
}

function middle(a: readonly string[], b: readonly string[]): Edit[] {
  const n = a.length;
  const m = b.length;
  const whole = (): Edit[] => [
    ...a.map((line): Edit => ({ op: "-", line })),
    ...b.map((line): Edit => ({ op: "+", line })),
  ];
  if (n === 0 || m === 0) return whole();
  // trace[d][k + d]: the furthest x reached on diagonal k (x - y) with d edits.
  const trace: Int32Array[] = [];
  const furthest = (d: number, k: number) => (d < 0 ? 0 : trace[d][k + d]);
  let found = -1;
  for (let d = 0; d <= Math.min(n + m, MAX_EDIT_DISTANCE) && found < 0; d++) {
    const row = new Int32Array(2 * d + 1);
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && furthest(d - 1, k - 1) < furthest(d - 1, k + 1));
      let x = d === 0 ? 0 : down ? furthest(d - 1, k + 1) : furthest(d - 1, k - 1) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      row[k + d] = x;
      if (x >= n && y >= m) found = d;
    }
    trace.push(row);
  }
  if (found < 0) return whole();

  const reversed: Edit[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const k = x - y;
    const down = k === -d || (k !== d && furthest(d - 1, k - 1) < furthest(d - 1, k + 1));
    const previousK = down ? k + 1 : k - 1;
    const previousX = furthest(d - 1, previousK);
    const previousY = previousX - previousK;
    while (x > previousX && y > previousY) {
      reversed.push({ op: " ", line: a[--x] });
      y--;
    }
    if (down) reversed.push({ op: "+", line: b[--y] });
    else reversed.push({ op: "-", line: a[--x] });
  }
  while (x > 0) {
    reversed.push({ op: " ", line: a[--x] });
    y--;
  }
  return reversed.reverse();
}

/**
 * The lines of a text. A last line without its newline keeps a "\n" of its own (no other line holds one): it then
 * differs from the same text with its newline, and is printed with diff's marker.
 */
function linesOf(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  const last = lines.pop()!;
  if (last !== "") lines.push(`${last}\n`);
  return lines;
}

/** A hunk's range as `diff -u` writes it: `start,count`, the count left out when 1, the line before when empty. */
const range = (start: number, count: number) =>
  count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`;

const printed = (edit: Edit) =>
  edit.line.endsWith("\n")
    ? `${edit.op}${edit.line.slice(0, -1)}\n\\ No newline at end of file`
    : `${edit.op}${edit.line}`;

/** The unified diff of one file (empty when equal); `undefined` content is a file that does not exist. */
export function unifiedFileDiff(name: string, before: string | undefined, after: string | undefined): string {
  if (before === after) return "";
  const edits = editScript(linesOf(before ?? ""), linesOf(after ?? ""));
  // Line numbers (1-based) of each edit in the old and the new file.
  const positions: { oldLine: number; newLine: number }[] = [];
  let oldLine = 1;
  let newLine = 1;
  for (const edit of edits) {
    positions.push({ oldLine, newLine });
    if (edit.op !== "+") oldLine++;
    if (edit.op !== "-") newLine++;
  }
  const changed = edits.flatMap((edit, index) => (edit.op === " " ? [] : [index]));
  if (changed.length === 0) return "";

  const out = [
    `--- ${before === undefined ? "/dev/null" : `a/${name}`}`,
    `+++ ${after === undefined ? "/dev/null" : `b/${name}`}`,
  ];
  let index = 0;
  while (index < changed.length) {
    const first = Math.max(0, changed[index] - CONTEXT);
    let last = Math.min(edits.length - 1, changed[index] + CONTEXT);
    // Changes whose contexts touch or overlap share a hunk.
    while (index + 1 < changed.length && changed[index + 1] - CONTEXT <= last + 1) {
      index++;
      last = Math.min(edits.length - 1, changed[index] + CONTEXT);
    }
    index++;
    const hunk = edits.slice(first, last + 1);
    const oldCount = hunk.filter((edit) => edit.op !== "+").length;
    const newCount = hunk.filter((edit) => edit.op !== "-").length;
    out.push(`@@ -${range(positions[first].oldLine, oldCount)} +${range(positions[first].newLine, newCount)} @@`);
    out.push(...hunk.map(printed));
  }
  return `${out.join("\n")}\n`;
}

/** The unified diff of two sets of files by name, file after file in name order. */
export function unifiedDiff(before: Record<string, string>, after: Record<string, string>): string {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names
    .map((name) => unifiedFileDiff(name, Object.hasOwn(before, name) ? before[name] : undefined, after[name]))
    .join("");
}
