// The web console's weight: the gzip size of its script and style sheet (assets/console/, built by
// scripts/build-console.mjs), against its budget of 100 KiB gzip. `npm run check:bundle` runs it beside the Worker's.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";

/** JavaScript and CSS together, gzip: the budget for a fast console (docs/console.md). */
export const CONSOLE_LIMIT_BYTES = 100 * 1024;

const root = path.join(import.meta.dirname, "..");

/**
 * Each script and style sheet of the built console with its gzip size, and their total.
 * @param {string} [dir] the built console (assets/console/)
 * @returns {{ files: { name: string, gzip: number }[], total: number }}
 */
export function consoleAssetSizes(dir = path.join(root, "assets", "console")) {
  const files = readdirSync(dir)
    .filter((name) => /\.(js|css)$/.test(name))
    .sort()
    .map((name) => ({ name, gzip: gzipSync(readFileSync(path.join(dir, name)), { level: 9 }).length }));
  return { files, total: files.reduce((sum, file) => sum + file.gzip, 0) };
}

/**
 * Prints the sizes; false when the total is over `limit`.
 * @param {{ files: { name: string, gzip: number }[], total: number }} sizes
 * @param {number} [limit]
 */
export function reportConsoleSize(sizes, limit = CONSOLE_LIMIT_BYTES) {
  /** @param {number} bytes */
  const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
  console.log(`\nThe console's assets (gzip):`);
  for (const { name, gzip } of sizes.files) console.log(`${kib(gzip).padStart(11)}  assets/console/${name}`);
  if (sizes.total > limit) {
    console.error(`The console is ${kib(sizes.total)} gzip, over its ${kib(limit)} budget.`);
    return false;
  }
  console.log(`The console is ${kib(sizes.total)} gzip: within its ${kib(limit)} budget.`);
  return true;
}
