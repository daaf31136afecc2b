// The TypeScript sources the static checks of test/scripts read, and the lines of them a pattern picks out.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** Every `.ts` file under `dir` of `base`, as a `/`-separated path from `base` starting with `dir`, in walk order. */
export function typeScriptFiles(base: string, dir: string): string[] {
  const found: string[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(path.join(base, relative), { withFileTypes: true })) {
      const child = `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith(".ts")) found.push(child);
    }
  };
  walk(dir);
  return found;
}

/** `file:line` of every line of `file` (under `base`) that `pattern` matches once `prepare` has rewritten the text. */
export function matchingLines(
  base: string,
  file: string,
  pattern: RegExp,
  prepare: (text: string) => string,
): string[] {
  const lines = prepare(readFileSync(path.join(base, file), "utf8")).split("\n");
  return lines.flatMap((line, i) => (pattern.test(line) ? [`${file}:${i + 1}`] : []));
}
