// Every hand-written file opens with a comment saying what it is for: in the Worker's own code 1 to 5 lines (longer
// detail belongs beside the code it explains, or in docs/); tests, scripts and benches may go on with their usage.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GENERATED, sourceFiles } from "../support/source-files";

const root = path.join(import.meta.dirname, "..", "..");
const MAX_HEADER_LINES = 5;
const SOURCE_DIRS = ["src", "durable-objects", "console"];
/** Folders whose files need an opening comment of any length (a script's usage may follow its first line). */
const OTHER_DIRS = ["test", "bench", "scripts", "grpc-gateway", "haproxy-agent"];

/**
 * Lines of the comment the text opens with (`//` lines in a row, or one block comment), after a `#!` line if any; 0
 * when it opens with code.
 */
function headerLines(text: string): number {
  const lines = text.split("\n");
  if (lines[0].startsWith("#!")) lines.shift();
  if (lines[0].startsWith("/*")) return lines.findIndex((line) => line.includes("*/")) + 1;
  const code = lines.findIndex((line) => !line.startsWith("//"));
  return code === -1 ? lines.length : code;
}

/** The opening comment's length of each hand-written file under `dirs` whose name matches `pattern`. */
function headers(dirs: string[], pattern: RegExp): Map<string, number> {
  return new Map(
    sourceFiles(root, dirs, pattern).map((relative) => [
      relative,
      headerLines(readFileSync(path.join(root, relative), "utf8")),
    ]),
  );
}

describe("file headers", () => {
  it(`opens every hand-written source file with a comment of 1 to ${MAX_HEADER_LINES} lines`, () => {
    const wrong = [...headers(SOURCE_DIRS, /\.ts$/)]
      .filter(([file, lines]) => lines < 1 || lines > MAX_HEADER_LINES)
      .map(([file, lines]) => `${file}: ${lines}`);
    expect(wrong).toEqual([]);
  });

  it("opens every test, bench, script, gateway and agent file with a comment", () => {
    const wrong = [...headers(OTHER_DIRS, /\.(ts|mts|cts|js|mjs|cjs)$/)]
      .filter(([, lines]) => lines < 1)
      .map(([file]) => file);
    expect(wrong).toEqual([]);
  });

  it("excludes only paths that exist", () => {
    expect(GENERATED.filter((entry) => !existsSync(path.join(root, entry)))).toEqual([]);
  });

  it("counts a header the way the rule means it", () => {
    expect(headerLines('// one\n// two\nimport x from "x";\n')).toBe(2);
    expect(headerLines("/**\n * block\n */\nexport {};\n")).toBe(3);
    expect(headerLines("// one\n\n// detail, not header\nexport {};\n")).toBe(1);
    expect(headerLines("export const x = 1;\n")).toBe(0);
    expect(headerLines('#!/usr/bin/env node\n// usage\nimport x from "x";\n')).toBe(1);
    expect(headerLines('#!/usr/bin/env node\nimport x from "x";\n')).toBe(0);
  });
});
