// Line diffs for the console: computed between two texts (two stored versions' files, two states of a project), or
// read from a unified diff the API sends (a preview's), and drawn as a table rather than raw text.
import { diffArrays } from "diff";
import { html } from "./ui";

export type DiffLine = { kind: "same" | "added" | "removed" | "hunk"; text: string };

/**
 * Past this many added plus removed lines the two texts are not aligned line by line. Myers' diff (jsdiff) costs
 * time and memory that grow with the square of the edits: at 1,000, about 0.2 s and 64 MB on the worst input found
 * (20,000 alternating lines), where 4,000 took 2.5 s and 900 MB.
 */
export const DIFF_MAX_EDITS = 1000;

const split = (text: string) => (text === "" ? [] : text.replace(/\n$/, "").split("\n"));

/** The line diff of two texts; past the bounds above, every old line removed and every new one added. */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = split(before);
  const b = split(after);
  const changes = diffArrays(a, b, { maxEditLength: DIFF_MAX_EDITS });
  const lines = (kind: DiffLine["kind"], texts: string[]) => texts.map((text): DiffLine => ({ kind, text }));
  if (!changes) return [...lines("removed", a), ...lines("added", b)];
  return changes.flatMap((change) => lines(change.added ? "added" : change.removed ? "removed" : "same", change.value));
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
