// The Workers suite's prebundled libraries cover every entry point of theirs that the code run in workerd imports: an
// entry left off would load beside the bundle as a second copy of its library, with its own classes and state.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PREBUNDLED } from "./prebundled";

const root = path.join(import.meta.dirname, "..", "..");

/** The folders of the code the Workers suite runs, and the test files it leaves to other runners. */
const WORKER_CODE = ["src", "durable-objects", "test"];
const NOT_IN_WORKERD = /(^test\/(integration|grpc-gateway)\/)|\.node\.test\.ts$|\.mjs$/;

/** The package an import specifier names: "hono" for "hono/factory", "@scope/name" for "@scope/name/sub". */
const packageOf = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(relative);
    return /\.(ts|tsx)$/.test(entry.name) && !NOT_IN_WORKERD.test(relative) ? [relative] : [];
  });
}

/** Every bare specifier imported (statically or dynamically) by the code the Workers suite runs. */
function importedSpecifiers(): Set<string> {
  const found = new Set<string>();
  const pattern = /(?:from|import)\s*\(?\s*"([^".][^"]*)"/g;
  for (const file of WORKER_CODE.flatMap(sourceFiles)) {
    for (const match of readFileSync(path.join(root, file), "utf8").matchAll(pattern)) found.add(match[1]);
  }
  return found;
}

describe("the Workers suite's prebundled libraries", () => {
  it("list every entry point of theirs that the Worker or its suites import", () => {
    const prebundledPackages = new Set(PREBUNDLED.map(packageOf));
    // "zod" itself is never the package in workerd: wrangler.toml's alias resolves it to src/shared/zod.ts.
    const imported = [...importedSpecifiers()].filter(
      (specifier) => specifier !== "zod" && prebundledPackages.has(packageOf(specifier)),
    );
    expect(imported.length).toBeGreaterThan(PREBUNDLED.length / 2);
    expect(imported.filter((specifier) => !PREBUNDLED.includes(specifier)).sort()).toEqual([]);
  });

  it("leave out zod itself and @hono/zod-openapi, whose import of zod wrangler.toml's alias must reach", () => {
    expect(
      PREBUNDLED.filter((specifier) => specifier === "zod" || packageOf(specifier) === "@hono/zod-openapi"),
    ).toEqual([]);
  });

  it("bundle zod once, as zod/v4, the one entry point of it that src/shared/zod-members.ts and the suites import", () => {
    expect(PREBUNDLED.filter((specifier) => packageOf(specifier) === "zod")).toEqual(["zod/v4"]);
  });
});
