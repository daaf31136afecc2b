// wrangler dev's rebuild after a file under config/ratelimit/ changes, on a copy of the project: a bad file leaves the
// running Worker with its last good rules (it used to switch every rule off), and the fixed file is then loaded.
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root } from "../support/processes.mjs";
import { startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";

const SKIPPED = new Set(["node_modules", ".git", ".wrangler", "coverage", "test-results", "tmp"]);

let project: string;
let server: DevServer;
let exampleFile: string;
let example: string;

beforeAll(async () => {
  project = mkdtempSync(path.join(tmpdir(), "ratelimit-rebuild-"));
  cpSync(root, project, {
    recursive: true,
    filter: (source) => !SKIPPED.has(path.relative(root, source).split(path.sep)[0]),
  });
  symlinkSync(path.join(root, "node_modules"), path.join(project, "node_modules"), "dir");
  exampleFile = path.join(project, "config", "ratelimit", "example.yaml");
  example = readFileSync(exampleFile, "utf8");
  server = await startWranglerDev({}, { name: "rebuild", projectDir: project });
});

afterAll(async () => {
  await server?.stop();
  if (project) rmSync(project, { recursive: true, force: true });
});

/** The limit of the README's /login rule as the running Worker answers it (within or over it), or the refusal. */
async function loginLimit(): Promise<unknown> {
  const response = await fetch(`${server.url}/json`, {
    method: "POST",
    body: JSON.stringify({ domain: "example", descriptors: [{ entries: [{ key: "path", value: "/login" }] }] }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  const decided = response.status === 200 || response.status === 429;
  return decided ? JSON.parse(text).statuses[0].currentLimit.requestsPerUnit : `${response.status} ${text}`;
}

const health = async () => {
  const response = await fetch(`${server.url}/healthcheck`, { signal: AbortSignal.timeout(10_000) });
  return `${response.status} ${await response.text()}`;
};

describe("wrangler dev's rebuild of config/ratelimit", () => {
  it("keeps the last good rules through a bad file, then loads the fixed one", async () => {
    expect(await loginLimit()).toBe(5);
    writeFileSync(exampleFile, example.replace("unit: minute", "unit: minit"));
    // The rebuild of the bad file runs meanwhile (wrangler dev watches config/): every answer keeps the old rule.
    const answers = new Set<unknown>();
    for (let i = 0; i < 20; i++) {
      answers.add(await loginLimit());
      answers.add(await health());
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect([...answers]).toEqual([5, "200 OK"]);
    // Rebuilds run in order: once the fixed file's limit answers, the bad file's rebuild had run before it.
    writeFileSync(exampleFile, example.replace("requests_per_unit: 5", "requests_per_unit: 6"));
    const started = Date.now();
    let limit: unknown;
    while (Date.now() - started < 60_000 && (limit = await loginLimit()) !== 6) {
      expect(limit).toBe(5);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(limit).toBe(6);
    expect(await health()).toBe("200 OK");
  });
});
