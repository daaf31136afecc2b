// Migration 0018 on a D1 (workerd through miniflare) holding SSH proxy versions from before it: each version's
// accounts and file move to ssh_proxy_version_files, whole, and the versions keep everything else.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, expect, it } from "vitest";

const dir = path.join(import.meta.dirname, "..", "..", "migrations");
const migrations = readdirSync(dir)
  .filter((name) => /^\d{4}_.*\.sql$/.test(name))
  .sort();

const mf = new Miniflare({
  modules: true,
  script: "export default { fetch: () => new Response('') }",
  d1Databases: ["DB"],
});
afterAll(() => mf.dispose());

/** Runs one migration file as wrangler does: its statements, split at drizzle's breakpoints, in one batch. */
async function apply(db: D1Database, name: string) {
  const statements = readFileSync(path.join(dir, name), "utf8")
    .split("--> statement-breakpoint")
    .map((statement) => statement.trim())
    .filter(Boolean);
  await db.batch(statements.map((statement) => db.prepare(statement)));
}

it("moves each version's accounts and sshpiperd file into ssh_proxy_version_files", async () => {
  const db = (await mf.getD1Database("DB")) as unknown as D1Database;
  const at = migrations.findIndex((name) => name.startsWith("0018_"));
  expect(at).toBeGreaterThan(0);
  for (const name of migrations.slice(0, at)) await apply(db, name);
  await db
    .prepare(
      "insert into ssh_proxy_versions (id, digest, job_run_id, accounts, yaml, warnings, created_at) values " +
        "(3, 'sha256:a', 7, '[{\"user\":\"é\"}]', 'pipes: []\n', '[\"WARN: x\"]', 1000), " +
        "(4, 'sha256:b', 8, '[]', '', '[]', 2000)",
    )
    .run();
  await apply(db, migrations[at]);
  const files = await db
    .prepare("select version_id, name, part, content from ssh_proxy_version_files order by version_id, name")
    .all();
  expect(files.results).toEqual([
    { version_id: 3, name: "accounts.json", part: 0, content: '[{"user":"é"}]' },
    { version_id: 3, name: "sshpiperd.yaml", part: 0, content: "pipes: []\n" },
    { version_id: 4, name: "accounts.json", part: 0, content: "[]" },
    { version_id: 4, name: "sshpiperd.yaml", part: 0, content: "" },
  ]);
  const versions = await db.prepare("select * from ssh_proxy_versions order by id").all();
  expect(versions.results).toEqual([
    { id: 3, digest: "sha256:a", job_run_id: 7, restored_from: null, warnings: '["WARN: x"]', created_at: 1000 },
    { id: 4, digest: "sha256:b", job_run_id: 8, restored_from: null, warnings: "[]", created_at: 2000 },
  ]);
});
