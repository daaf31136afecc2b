// The layout rule on function size: no hand-written function of the Worker, the gateway, the agent or the scripts runs
// over 60 lines (docs/architecture.md), so a long one is split into named phases before it lands. The few kept longer
// are listed here, each with its reason.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { sourceFiles } from "../support/source-files";

const root = path.join(import.meta.dirname, "..", "..");
const MAX_LINES = 60;
/** The folders checked: the Worker (src, its objects, the console) and the Node programs beside it. */
const CHECKED_DIRS = ["src", "durable-objects", "console", "grpc-gateway", "haproxy-agent", "scripts"];

/** The functions kept longer than MAX_LINES, by `file: name`, each with why splitting it would hurt. */
const ALLOWED: Record<string, string> = {
  "src/news/routes/validation.ts: validationFailure":
    "one case per zod issue kind, each a few lines: a table from issue to the original API's validation object, " +
    "read top to bottom; split, the cases would only be scattered",
};

/** What a function is called where it is declared: its own name, or the variable or property it is assigned to. */
function nameOf(node: ts.FunctionLikeDeclaration, file: ts.SourceFile): string {
  if (node.name) return node.name.getText(file);
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name)
    return parent.name.getText(file);
  if (ts.isCallExpression(parent)) return `<argument of ${parent.expression.getText(file).slice(0, 40)}>`;
  return "<anonymous>";
}

/**
 * Every function, method, accessor, constructor and arrow function in `text` whose body runs over `max` lines (from
 * the line its body opens on to the line it closes on), as `name: lines`. Nested functions count within their outer
 * one too, as they are read there.
 */
function longFunctions(fileName: string, text: string, max: number): { name: string; lines: number }[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: { name: string; lines: number }[] = [];
  const lineOf = (position: number) => file.getLineAndCharacterOfPosition(position).line;
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const body = node.body as ts.Node;
      const lines = lineOf(body.getEnd()) - lineOf(body.getStart(file)) + 1;
      if (lines > max) found.push({ name: nameOf(node as ts.FunctionLikeDeclaration, file), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** Every long function of the hand-written sources under `dir` of `base`, as `file: name` → lines. */
function longFunctionsUnder(base: string, dir: string, max: number): Map<string, number> {
  const found = new Map<string, number>();
  for (const relative of sourceFiles(base, [dir])) {
    for (const { name, lines } of longFunctions(relative, readFileSync(path.join(base, relative), "utf8"), max))
      found.set(`${relative}: ${name}`, lines);
  }
  return found;
}

describe("function sizes", () => {
  const found = new Map(CHECKED_DIRS.flatMap((dir) => [...longFunctionsUnder(root, dir, MAX_LINES)]));

  it(`has no hand-written function over ${MAX_LINES} lines in ${CHECKED_DIRS.join(", ")} but those allowed`, () => {
    expect([...found].filter(([key]) => !(key in ALLOWED)).map(([key, lines]) => `${key} (${lines} lines)`)).toEqual(
      [],
    );
  });

  it("allows only functions that are still over the limit, each with a reason", () => {
    expect(Object.keys(ALLOWED).filter((key) => !found.has(key))).toEqual([]);
    expect(Object.entries(ALLOWED).filter(([, reason]) => reason.trim().length < 20)).toEqual([]);
  });

  describe("the check itself", () => {
    const base = mkdtempSync(path.join(tmpdir(), "function-sizes-"));
    afterAll(() => rmSync(base, { recursive: true, force: true }));
    const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  x(${i});`).join("\n");

    it("measures bodies from their opening to their closing line, for every kind of function", () => {
      const text = [
        `function atLimit() {\n${body(60)}\n}`,
        `export async function declared(\n  a: number,\n  b: number,\n) {\n${body(61)}\n}`,
        `const arrow = async () => {\n${body(62)}\n};`,
        `class Store {\n  method() {\n${body(63)}\n  }\n  constructor() {\n${body(64)}\n  }\n}`,
        `const object = { property: function () {\n${body(65)}\n} };`,
        `register(app, (c) => {\n${body(66)}\n});`,
      ].join("\n");
      expect(longFunctions("a.ts", text, MAX_LINES)).toEqual([
        { name: "declared", lines: 61 },
        { name: "arrow", lines: 62 },
        { name: "method", lines: 63 },
        { name: "constructor", lines: 64 },
        { name: "property", lines: 65 },
        { name: "<argument of register>", lines: 66 },
      ]);
    });

    it("counts nested functions within their outer one, and names both", () => {
      const text = `function outer() {\n  const inner = () => {\n${body(61)}\n  };\n}`;
      expect(longFunctions("a.ts", text, MAX_LINES)).toEqual([
        { name: "outer", lines: 63 },
        { name: "inner", lines: 61 },
      ]);
    });

    it("reads every TypeScript and JavaScript file under the folder, leaving out generated code", () => {
      const write = (relative: string, text: string) => {
        mkdirSync(path.dirname(path.join(base, relative)), { recursive: true });
        writeFileSync(path.join(base, relative), text);
      };
      const long = `export function long() {\n${body(70)}\n}\n`;
      write("src/a/deep/long.ts", long);
      write("src/a/short.ts", `export function short() {\n${body(10)}\n}\n`);
      write("src/a/notes.md", long);
      write("src/a/agent.mjs", long.replace("long()", "script()"));
      write("src/node_modules/dep/index.js", long);
      write("src/ratelimit/gen/big_pb.ts", long);
      write("src/ratelimit/config/bundled.gen.ts", long);
      write("src/proxy/haproxy-params/haproxy-keywords.ts", long);
      expect([...longFunctionsUnder(base, "src", MAX_LINES)].sort()).toEqual([
        ["src/a/agent.mjs: script", 70],
        ["src/a/deep/long.ts: long", 70],
      ]);
    });
  });
});
