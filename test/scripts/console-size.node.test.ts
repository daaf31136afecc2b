// The size check covers the web console: `npm run check:bundle` builds it and measures its script and style sheet,
// which must stay within 100 KiB gzip together.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { CONSOLE_LIMIT_BYTES, consoleAssetSizes, reportConsoleSize } from "../../scripts/console-size.mjs";

const root = path.join(import.meta.dirname, "..", "..");

describe("the console's size check", () => {
  it("measures the built console's script and style sheet, within 100 KiB gzip", () => {
    expect(spawnSync(process.execPath, [path.join(root, "scripts", "build-console.mjs")]).status).toBe(0);
    const sizes = consoleAssetSizes();
    expect(sizes.files.map((file: { name: string }) => file.name)).toEqual(["console.css", "console.js"]);
    expect(CONSOLE_LIMIT_BYTES).toBe(100 * 1024);
    expect(sizes.total).toBeLessThanOrEqual(CONSOLE_LIMIT_BYTES);
    expect(reportConsoleSize(sizes)).toBe(true);
  });

  it("fails over the budget, counting every script and style sheet and nothing else", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "console-size-"));
    try {
      // Random bytes do not compress: about 120 KiB gzip.
      const big = randomBytes(120 * 1024);
      writeFileSync(path.join(dir, "a.js"), big);
      writeFileSync(path.join(dir, "b.css"), "body{}");
      writeFileSync(path.join(dir, "index.html"), big);
      const sizes = consoleAssetSizes(dir);
      expect(sizes.files).toEqual([
        { name: "a.js", gzip: gzipSync(big, { level: 9 }).length },
        { name: "b.css", gzip: gzipSync("body{}", { level: 9 }).length },
      ]);
      expect(sizes.total).toBeGreaterThan(CONSOLE_LIMIT_BYTES);
      expect(reportConsoleSize(sizes)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
