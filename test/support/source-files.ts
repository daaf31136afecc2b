// The sources the static checks of test/scripts read (every folder walked but dependencies and tools' output, such as
// .wrangler/; generated code left out by name unless asked for), and the lines of them a pattern picks out.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** Generated files, by path from the repository root: a file, or a folder when it ends in `/`. */
export const GENERATED = [
  "src/proxy/haproxy-params/haproxy-keywords.ts", // npm run gen:haproxy-keywords
  "src/ratelimit/gen/", // npm run proto:generate
];
/** Generated at build time under any name: the bundled rate limit configuration (bundle-ratelimit-config.mjs). */
const GENERATED_SUFFIX = ".gen.ts";
const SOURCE_FILE = /\.(ts|mts|cts|js|mjs|cjs)$/;

const isGenerated = (relative: string) =>
  relative.endsWith(GENERATED_SUFFIX) ||
  GENERATED.some((entry) => (entry.endsWith("/") ? relative.startsWith(entry) : relative === entry));

/**
 * Paths from `base` (`/`-separated, starting with the folder) of the files under those of `dirs` that exist whose
 * names match `pattern`, sorted; generated ones only with `withGenerated`.
 */
export function sourceFiles(
  base: string,
  dirs: string[],
  pattern: RegExp = SOURCE_FILE,
  { withGenerated = false } = {},
): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(base, dir), { withFileTypes: true })) {
      const relative = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && !entry.name.startsWith(".")) walk(relative);
      } else if (pattern.test(entry.name) && (withGenerated || !isGenerated(relative))) found.push(relative);
    }
  };
  for (const dir of dirs) if (existsSync(path.join(base, dir))) walk(dir);
  return found.sort();
}

/** Every `.ts` file under `dir` of `base`, generated ones included. */
export const typeScriptFiles = (base: string, dir: string): string[] =>
  sourceFiles(base, [dir], /\.ts$/, { withGenerated: true });

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
