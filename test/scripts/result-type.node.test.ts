// One Result type (src/shared/result.ts): a second `{ ok: true; … } | { ok: false; … }` union declared anywhere
// else in src fails here, so that every caller reads `value` and `error` the same way.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { matchingLines, typeScriptFiles } from "../support/source-files";

const root = path.join(import.meta.dirname, "..", "..");
const HOME = "src/shared/result.ts";
/** Three-way verdicts are not results: HAProxy passed, refused or could not be asked. */
const ALLOWED = new Set(["src/proxy/installation/backend-check.ts"]);

/**
 * An `ok: true` or `ok: false` member of a type literal: followed by `;` (object literals use `,`), or closing a
 * literal that is one side of a union.
 */
const RESULT_MEMBER = /\bok\??:\s*(true|false)\s*;|\{\s*ok:\s*(true|false)\s*\}\s*\||\|\s*\{\s*ok:\s*(true|false)\s*\}/;

const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");

/** `file:line` of every result-like union member in the TypeScript files under `dir` of `base`. */
function resultDeclarations(base: string, dir: string): string[] {
  return typeScriptFiles(base, dir)
    .filter((file) => file !== HOME && !ALLOWED.has(file))
    .flatMap((file) => matchingLines(base, file, RESULT_MEMBER, withoutComments));
}

describe("one Result type", () => {
  it("declares no other ok/error union in src", () => {
    expect(resultDeclarations(root, "src")).toEqual([]);
  });

  it("finds the declarations it exists to refuse, and not object literals", () => {
    const flagged = [
      "type R = { ok: true; value: number } | { ok: false; error: string };",
      "function f(): { ok: false; error: E } {",
      "type V =\n  | { ok: true }\n  | { ok: false; field: string };",
    ];
    for (const text of flagged) expect(RESULT_MEMBER.test(text), text).toBe(true);
    expect(RESULT_MEMBER.test("return { ok: true, value: 1 };")).toBe(false);
    expect(RESULT_MEMBER.test("return check.valid ? { ok: true } : refusal;")).toBe(false);
  });
});
