// Where COUNTER_OBJECT_ACTIVE_LIMIT applies: off in the deploy configuration (wrangler.toml's [vars], as `wrangler
// deploy` reads them), since on Cloudflare the counter objects run outside the Worker's process; on in a local
// `wrangler dev` (npm start: the vars file's value or npm start's own, scripts/start/local-vars.mjs), where workerd
// runs them in one process with one SQLite heap. A value the user sets locally is kept.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LOCAL_VARS, missingLocalVars } from "../../scripts/start/local-vars.mjs";
import { workerEnv } from "../../scripts/start/settings.mjs";
import { counterStoreSettings } from "../../src/ratelimit/counter-store-settings";

const root = path.join(import.meta.dirname, "..", "..");
const dir = mkdtempSync(path.join(tmpdir(), "local-vars-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** wrangler.toml's vars as `wrangler deploy` takes them: wrangler's own reader, in a process of its own. */
function deployVars(): Record<string, unknown> {
  const script = `const { unstable_readConfig } = await import("wrangler");
    console.log("\\n" + JSON.stringify(unstable_readConfig({ config: ${JSON.stringify(path.join(root, "wrangler.toml"))} }).vars));`;
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout.trimEnd().split("\n").at(-1)!);
}

/** The env npm start hands wrangler dev with this vars file and these arguments, its local values added. */
async function localEnv(varsLines: string[], args: string[] = []) {
  const file = path.join(dir, `vars-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, varsLines.join("\n"));
  const worker = await workerEnv(root, ["--env-file", file, ...args]);
  return { ...worker.values, ...missingLocalVars(worker) };
}

const activeLimit = (vars: Record<string, unknown>) => counterStoreSettings(vars).COUNTER_OBJECT_ACTIVE_LIMIT;

describe("COUNTER_OBJECT_ACTIVE_LIMIT by configuration", () => {
  it("is 0, no limit, in the configuration wrangler deploy sends", () => {
    const vars = deployVars();
    expect(vars.COUNTER_OBJECT_ACTIVE_LIMIT).toBe("0");
    expect(activeLimit(vars)).toBe(0);
  });

  it("is 2000 in npm start's env, from .dev.vars.example or, when the vars file lacks it, from npm start", async () => {
    expect(LOCAL_VARS).toEqual({ COUNTER_OBJECT_ACTIVE_LIMIT: "2000" });
    const example = readFileSync(path.join(root, ".dev.vars.example"), "utf8").split("\n");
    expect(example).toContain("COUNTER_OBJECT_ACTIVE_LIMIT=2000");
    expect(activeLimit(await localEnv(example))).toBe(2000);
    const older = example.filter((line) => !line.startsWith("COUNTER_OBJECT_ACTIVE_LIMIT="));
    expect(activeLimit(await localEnv(older))).toBe(2000);
  }, 60_000);

  it("keeps a value the vars file or --var sets", async () => {
    expect(activeLimit(await localEnv(["COUNTER_OBJECT_ACTIVE_LIMIT=500"]))).toBe(500);
    expect(activeLimit(await localEnv([], ["--var", "COUNTER_OBJECT_ACTIVE_LIMIT:0"]))).toBe(0);
  }, 60_000);

  it("adds a local value only where the env has none but wrangler.toml's", () => {
    const fromToml = { values: { COUNTER_OBJECT_ACTIVE_LIMIT: "0" }, origins: {} as Record<string, string> };
    fromToml.origins.COUNTER_OBJECT_ACTIVE_LIMIT = "set in wrangler.toml [vars]";
    expect(missingLocalVars(fromToml)).toEqual({ COUNTER_OBJECT_ACTIVE_LIMIT: "2000" });
    expect(missingLocalVars({ values: {}, origins: {} })).toEqual({ COUNTER_OBJECT_ACTIVE_LIMIT: "2000" });
    const fromFile = {
      values: { COUNTER_OBJECT_ACTIVE_LIMIT: "0" },
      origins: { COUNTER_OBJECT_ACTIVE_LIMIT: "set in x" },
    };
    expect(missingLocalVars(fromFile)).toEqual({});
  });
});
