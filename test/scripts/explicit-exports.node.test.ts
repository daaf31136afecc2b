// No `export *` in src/ or durable-objects/: a module's index says by name what it offers, so that what the rest of
// the Worker may import is read in one place and a helper made public by accident shows in review.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { matchingLines, typeScriptFiles } from "../support/source-files";

const root = path.join(import.meta.dirname, "..", "..");

/** `export * from "…"` and `export * as name from "…"`, at the start of a statement. */
const EXPORT_STAR = /(^|[;{}])\s*export\s*\*/m;

const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");

/** `file:line` of every `export *` in the TypeScript files under `dir`. */
function exportStars(dir: string): string[] {
  return typeScriptFiles(root, dir).flatMap((file) => matchingLines(root, file, EXPORT_STAR, withoutComments));
}

describe("explicit exports", () => {
  it("has no export * in src or durable-objects", () => {
    expect([...exportStars("src"), ...exportStars("durable-objects")]).toEqual([]);
  });

  it("finds the re-exports it exists to refuse, and not named ones", () => {
    for (const text of ['export * from "./vet";', 'export * as z from "./zod-members";', '  export*from"./a";'])
      expect(EXPORT_STAR.test(text), text).toBe(true);
    for (const text of ['export { z } from "./zod";', "export const star = a * b;", 'import * as z from "./zod";'])
      expect(EXPORT_STAR.test(text), text).toBe(false);
  });
});
