// The layout rule on errors (docs/architecture.md): stores, installation code, the rate limit core and the jobs throw
// domain errors (a kind and the message, shared/domain-errors.ts), never an HTTP status; each service's errors.ts
// alone answers a kind with a status. This reads the code of those folders and fails on any HTTP error in it.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = path.join(import.meta.dirname, "..", "..");

/** Where no HTTP status may be chosen: each service's stores and installation code, the core, the jobs. */
const FOLDERS = ["src/*/store/", "src/*/installation/", "src/jobs/", "src/ratelimit/core/", "src/proxy/jobs/"];

/** The modules that answer HTTP: a service's errors.ts (its wire format) and everything of shared/http. */
const HTTP_MODULE = /^src\/(?:(?:proxy|news|ratelimit)\/errors(?:\.ts)?|shared\/http\/.*)$/;

/** HTTP in code (comments left out): HttpError, a status property or field, or a 4xx/5xx number given to an error. */
const HTTP_PATTERNS: [RegExp, string][] = [
  [/\bHttpError\b/, "names HttpError"],
  [/\bstatus\s*[:=]\s*[45]\d\d\b/, "sets a status to a 4xx/5xx number"],
  [/\b(?:readonly|public|private|protected)\s+status\b/, "declares a status field"],
  [/\b(?:new\s+[A-Za-z_$][\w$]*|super)\s*\(\s*[45]\d\d\b/, "passes a 4xx/5xx number to an error"],
];

const LITERALS = new Set([
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateHead,
  ts.SyntaxKind.TemplateMiddle,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.RegularExpressionLiteral,
]);

/** The code of `parsed` as its tokens, without comments and with every string empty: prose about statuses is free. */
function codeOf(parsed: ts.SourceFile): string {
  const tokens: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isJSDoc(node)) return;
    if (LITERALS.has(node.kind)) tokens.push('""');
    else if (node.getChildCount(parsed) === 0) tokens.push(node.getText(parsed));
    else for (const child of node.getChildren(parsed)) visit(child);
  };
  visit(parsed);
  return tokens.join(" ");
}

/** The modules `file` (a path from the root) imports or re-exports, as paths from the root when relative. */
function importsOf(file: string, parsed: ts.SourceFile): string[] {
  return parsed.statements.flatMap((statement) => {
    const specifier =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier)) return [];
    const target = specifier.text;
    return [target.startsWith(".") ? path.posix.join(path.posix.dirname(file), target) : target];
  });
}

/** What in `source` (the file at `file`, from the root) answers HTTP, in words; empty when nothing does. */
export function httpIn(file: string, source: string): string[] {
  const parsed = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const code = codeOf(parsed);
  const found = HTTP_PATTERNS.filter(([pattern]) => pattern.test(code)).map(([, what]) => what);
  for (const target of importsOf(file, parsed))
    if (HTTP_MODULE.test(target)) found.push(`imports ${target.endsWith(".ts") ? target : `${target}.ts`}`);
  return found;
}

/** Every TypeScript file under the folders (a `*` segment matches any one folder), as paths from the root. */
function filesUnder(patterns: readonly string[]): string[] {
  const files: string[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = path.posix.join(relative, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith(".ts")) files.push(child);
    }
  };
  for (const pattern of patterns) {
    const [before, after] = pattern.split("*");
    const bases =
      after === undefined
        ? [before]
        : readdirSync(path.join(root, before), { withFileTypes: true })
            .filter((entry) => entry.isDirectory())
            .map((entry) => path.posix.join(before, entry.name, after));
    for (const base of bases) if (existsSync(path.join(root, base))) walk(base);
  }
  return [...new Set(files)].sort();
}

describe("domain errors below the routes", () => {
  const found = new Map(
    filesUnder(FOLDERS).map((file) => [file, httpIn(file, readFileSync(path.join(root, file), "utf8"))]),
  );

  it("finds the folders' files", () => {
    expect([...found.keys()]).toEqual(
      expect.arrayContaining(["src/jobs/locks.ts", "src/proxy/installation/writes.ts"]),
    );
  });

  it("has no HTTP status in stores, installation code, the core or the jobs", () => {
    expect([...found].filter(([, what]) => what.length > 0)).toEqual([]);
  });

  describe("the check itself", () => {
    it("finds HttpError, status properties and fields, and statuses given to errors", () => {
      expect(httpIn("src/a/store/x.ts", 'throw new HttpError(404, "x");')).toEqual([
        "names HttpError",
        "passes a 4xx/5xx number to an error",
      ]);
      expect(httpIn("src/a/store/x.ts", "const e = { status: 409 };")).toEqual(["sets a status to a 4xx/5xx number"]);
      expect(httpIn("src/a/store/x.ts", "class E { readonly status = 1 }")).toEqual(["declares a status field"]);
      expect(httpIn("src/a/store/x.ts", "class E extends Base { constructor() { super(423, 'x'); } }")).toEqual([
        "passes a 4xx/5xx number to an error",
      ]);
    });

    it("finds imports of a service's errors.ts and of shared/http, however the path is written", () => {
      expect(httpIn("src/news/store/x.ts", 'import { conflict } from "../errors";')).toEqual([
        "imports src/news/errors.ts",
      ]);
      expect(httpIn("src/proxy/jobs/x.ts", 'export { X } from "../../shared/http/errors";')).toEqual([
        "imports src/shared/http/errors.ts",
      ]);
      expect(httpIn("src/proxy/jobs/x.ts", 'import { NotFound } from "../domain-errors";')).toEqual([]);
    });

    it("leaves comments, strings, other numbers and other properties alone", () => {
      const text = [
        "// answers 404 with HttpError, status: 404",
        "/* new NotFound(404) */",
        'const row = { status: "active", count: 404 };',
        "const timeout = setTimeout(f, 500);",
        'refuse("status: 404 is a HAProxy keyword here");',
        "const text = `new Conflict(409) ${x} status: 500`;",
        "/** A JSDoc that says super(423). */",
      ].join("\n");
      expect(httpIn("src/a/installation/x.ts", text)).toEqual([]);
    });
  });
});
