// The layout rule on size: no hand-written source file passes 450 lines (docs/architecture.md), so a file that grows
// past it is split by meaning before it lands. Generated files are excluded by name.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GENERATED, sourceFiles } from "../support/source-files";

const root = path.join(import.meta.dirname, "..", "..");
const MAX_LINES = 450;
const SOURCE_DIRS = ["src", "durable-objects", "grpc-gateway", "haproxy-agent", "scripts", "console", "test", "bench"];

/** Lines as `wc -l` counts them: newline characters, plus a last line without one. */
function lineCount(text: string): number {
  const newlines = text.split("\n").length - 1;
  return text.length > 0 && !text.endsWith("\n") ? newlines + 1 : newlines;
}

/** Every hand-written source file under `dirs` of `base` longer than `max` lines, as `path: lines`. */
function oversized(base: string, dirs: string[], max: number): string[] {
  return sourceFiles(base, dirs).flatMap((relative) => {
    const lines = lineCount(readFileSync(path.join(base, relative), "utf8"));
    return lines > max ? [`${relative}: ${lines}`] : [];
  });
}

describe("source file sizes", () => {
  it(`has no hand-written source file over ${MAX_LINES} lines`, () => {
    expect(oversized(root, SOURCE_DIRS, MAX_LINES)).toEqual([]);
  });

  it("excludes only generated paths that exist", () => {
    expect(GENERATED.filter((entry) => !existsSync(path.join(root, entry)))).toEqual([]);
  });

  describe("the check itself", () => {
    const base = mkdtempSync(path.join(tmpdir(), "file-sizes-"));
    afterAll(() => rmSync(base, { recursive: true, force: true }));
    const write = (relative: string, lines: number) => {
      mkdirSync(path.dirname(path.join(base, relative)), { recursive: true });
      writeFileSync(path.join(base, relative), "x\n".repeat(lines));
    };

    it("names a file of 451 lines, in any source folder and extension, and passes one of 450", () => {
      write("src/a/at-limit.ts", 450);
      write("src/a/over.ts", 451);
      write("scripts/over.mjs", 500);
      write("src/a/notes.md", 900);
      write("src/node_modules/dep/index.js", 900);
      write("bench/soak-control/.wrangler/tmp/worker.js", 900);
      write("src/ratelimit/gen/big_pb.ts", 900);
      write("src/ratelimit/config/bundled.gen.ts", 900);
      write("src/proxy/haproxy-params/haproxy-keywords.ts", 900);
      expect(oversized(base, SOURCE_DIRS, MAX_LINES)).toEqual(["scripts/over.mjs: 500", "src/a/over.ts: 451"]);
    });

    it("counts a last line without a newline, as wc -l does not", () => {
      expect([lineCount(""), lineCount("a"), lineCount("a\n"), lineCount("a\nb")]).toEqual([0, 1, 1, 2]);
    });
  });
});
