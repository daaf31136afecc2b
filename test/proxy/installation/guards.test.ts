// In-batch guards (installation/guards.ts) on the real D1: a refusal rolls the whole write back and answers the
// guard's own error with the detail the SQL gave; a guard that finds nothing lets the write through.
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { database } from "../../../src/shared/db";
import { commitWrite } from "../../../src/proxy/installation/writes";
import { DomainError } from "../../../src/shared/domain-errors";

/** The projects whose label starts with the test's own prefix, so that no test sees the rows of another. */
const labels = (prefix: string) =>
  env.DB.prepare("select label from projects where label like ? order by label")
    .bind(`${prefix}%`)
    .all<{ label: string }>()
    .then((result) => result.results.map((row) => row.label));

const insertProject = (label: string) => sql`insert into projects (label) values (${label})`;

describe("commitWrite with guards", () => {
  it("refuses with the answer of the guard whose refusal is not null, storing nothing", async () => {
    const db = database(env.DB);
    const attempt = commitWrite(
      db,
      {},
      {
        what: "test",
        projects: [],
        statements: [insertProject("guardrefa"), insertProject("guardrefb")],
        guards: [
          { refusal: sql`null`, answer: () => new DomainError("invalid", "first") },
          {
            refusal: sql`(select group_concat(label, ',') from projects where label like 'guardref%')`,
            answer: (detail) => new DomainError("conflict", `second: ${detail}`),
          },
        ],
        changes: [],
      },
    );
    await expect(attempt).rejects.toMatchObject({ kind: "conflict", message: "second: guardrefa,guardrefb" });
    expect(await labels("guardref")).toEqual([]);
  });

  it("lets the write through when every refusal is null", async () => {
    const db = database(env.DB);
    await commitWrite(
      db,
      {},
      {
        what: "test",
        projects: [],
        statements: [insertProject("guardpassc")],
        guards: [
          {
            refusal: sql`(select label from projects where label = 'nothere')`,
            answer: () => new DomainError("invalid", "x"),
          },
        ],
        changes: [],
      },
    );
    expect(await labels("guardpass")).toEqual(["guardpassc"]);
  });

  it("answers a refused dry run like the write", async () => {
    const db = database(env.DB);
    const attempt = commitWrite(
      db,
      { dryRun: true },
      {
        what: "test",
        projects: [],
        statements: [insertProject("guarddryd")],
        guards: [{ refusal: sql`'limit'`, answer: (detail) => new DomainError("quota", `refused: ${detail}`) }],
        changes: [],
      },
    );
    await expect(attempt).rejects.toMatchObject({ kind: "quota", message: "refused: limit" });
    expect(await labels("guarddry")).toEqual([]);
  });
});
