// Line diffs for the console: computed between two texts (two stored versions' files, two states of a project), or
// read from a unified diff the API sends (a preview's), and drawn as a table rather than raw text.
import { html } from "./ui";

export type DiffLine = { kind: "same" | "added" | "removed" | "hunk"; text: string };

/** The longest-common-subsequence diff of two line lists, the shared head and tail cut off first. */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = before === "" ? [] : before.replace(/\n$/, "").split("\n");
  const b = after === "" ? [] : after.replace(/\n$/, "").split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  // lengths[i][j]: the common subsequence of x[i..] and y[j..].
  const lengths = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--)
      lengths[i][j] = x[i] === y[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
  const middle: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      middle.push({ kind: "same", text: x[i] });
      i++;
      j++;
    } else if (j < y.length && (i === x.length || lengths[i][j + 1] >= lengths[i + 1][j])) {
      middle.push({ kind: "added", text: y[j++] });
    } else {
      middle.push({ kind: "removed", text: x[i++] });
    }
  }
  const same = (lines: string[]) => lines.map((text): DiffLine => ({ kind: "same", text }));
  return [...same(a.slice(0, head)), ...middle, ...same(a.slice(a.length - tail))];
}

/** Keeps the changed lines with `context` lines around each, and a marker where lines were left out. */
export function withContext(lines: DiffLine[], context = 3): DiffLine[] {
  const keep = lines.map(() => false);
  lines.forEach((line, index) => {
    if (line.kind === "same") return;
    for (let k = Math.max(0, index - context); k <= Math.min(lines.length - 1, index + context); k++) keep[k] = true;
  });
  const out: DiffLine[] = [];
  lines.forEach((line, index) => {
    if (keep[index]) out.push(line);
    else if (index === 0 || keep[index - 1]) out.push({ kind: "hunk", text: "… unchanged lines …" });
  });
  return out;
}

/** The lines of a unified diff (`diff -u`), its file headers left out. */
export function parseUnified(text: string): DiffLine[] {
  return text
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("--- ") && !line.startsWith("+++ "))
    .map((line): DiffLine => {
      if (line.startsWith("@@")) return { kind: "hunk", text: line };
      if (line.startsWith("+")) return { kind: "added", text: line.slice(1) };
      if (line.startsWith("-")) return { kind: "removed", text: line.slice(1) };
      return { kind: "same", text: line.slice(1) };
    });
}

const MARK = { same: " ", added: "+", removed: "−", hunk: "" };
const SPOKEN = { same: "unchanged", added: "added", removed: "removed", hunk: "" };

/** A diff as a table: one row per line, marked added or removed in words as well as colour. */
export function DiffView({ lines, caption }: { lines: DiffLine[]; caption: string }) {
  const added = lines.filter((line) => line.kind === "added").length;
  const removed = lines.filter((line) => line.kind === "removed").length;
  if (added === 0 && removed === 0) return html`<p class="diff-none">${caption}: no difference.</p>`;
  return html`<figure class="diff">
    <figcaption>${caption}: ${added} line${added === 1 ? "" : "s"} added, ${removed} removed</figcaption>
    <table>
      <tbody>
        ${lines.map(
          (line) =>
            html`<tr class=${`diff-${line.kind}`}>
              <td class="diff-mark">
                <span aria-hidden="true">${MARK[line.kind]}</span>${
                  line.kind !== "hunk" && html`<span class="visually-hidden">${SPOKEN[line.kind]}</span>`
                }
              </td>
              <td><code>${line.text}</code></td>
            </tr>`,
        )}
      </tbody>
    </table>
  </figure>`;
}
