// scripts/ratelimit-check.mjs (`npm run ratelimit:check -- <files or folders>`): the Worker's loader in Node for CI.
// The messages are word for word PUT /rlconfig/files's for the same file (test/ratelimit/routes/rlconfig-validate.test.ts
// asserts the same texts through the Worker), followed by the place; exit 0, 1 or 2.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const root = path.join(import.meta.dirname, "..", "..");
const script = path.join(root, "scripts", "ratelimit-check.mjs");
const rule = (domain: string, limit: number, unit = "hour") =>
  `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: ${unit}\n      requests_per_unit: ${limit}\n`;

const made: string[] = [];
afterEach(() => made.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A folder holding these files (names may include one subfolder). */
function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "ratelimit-check-"));
  made.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

function check(args: string[], env: Record<string, string> = {}, cwd = root) {
  const result = spawnSync(process.execPath, [script, ...args], {
    cwd,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("npm run ratelimit:check", () => {
  it("loads a folder's and a file's YAML as one set and says what would load", () => {
    const dir = folder({
      "a.yaml": rule("a", 1),
      "b.yaml": rule("b", 2),
      "notes.txt": "x",
      "sub/c.yaml": rule("c", 3),
    });
    expect(check([dir, path.join(root, "config", "ratelimit", "example.yaml")])).toEqual({
      status: 0,
      stdout: "ok: 3 files, 6 rules, domains: a, b, example\n",
      stderr: "",
    });
  });

  it("exits 1 with PUT's message and the place of the problem", () => {
    const dir = folder({ "val-e.yaml": rule("val-e", 5, "fortnight") });
    expect(check([dir])).toEqual({
      status: 1,
      stdout: "",
      stderr: `val-e.yaml: invalid rate limit unit 'fortnight'\n  at ${path.join(dir, "val-e.yaml")}:5\n`,
    });
  });

  it("loads with the settings of the environment over wrangler.toml's", () => {
    const windows = `${rule("w", 5)}    additional_limits:\n      - unit: day\n        requests_per_unit: 50\n`;
    const dir = folder({ "w.yaml": windows, "dup.yaml": rule("w", 1).replace("key: k", "key: other") });
    expect(check([path.join(dir, "w.yaml")]).status).toBe(0);
    expect(check([path.join(dir, "w.yaml")], { BACKEND_TYPE: "memcache", KVSTORE_URL: "127.0.0.1:11211" })).toEqual({
      status: 1,
      stdout: "",
      stderr:
        "w.yaml: rule 'w.k' has additional_limits, which the counter store chosen by BACKEND_TYPE=memcache cannot " +
        `count atomically (one fixed_window per descriptor only)\n  at ${path.join(dir, "w.yaml")}\n`,
    });
    expect(check([dir]).stderr).toBe(
      `w.yaml: duplicate domain 'w' in config file\n  at ${path.join(dir, "w.yaml")}:1\n`,
    );
    expect(check([dir], { MERGE_DOMAIN_CONFIG: "true" }).status).toBe(0);
  });

  it("exits 2 without arguments, for a missing path, and for two files of one name", () => {
    const one = folder({ "a.yaml": rule("a", 1) });
    const two = folder({ "a.yaml": rule("b", 1) });
    expect(check([])).toMatchObject({ status: 2, stderr: expect.stringContaining("no files or folders given") });
    expect(check([path.join(one, "none.yaml")])).toMatchObject({
      status: 2,
      stderr: expect.stringContaining("no such"),
    });
    expect(check([one, two]).status).toBe(2);
  });
});
