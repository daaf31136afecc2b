// The D1 error wording the code branches on (src/shared/db.ts), provoked for real in workerd: a runtime whose
// SQLite or D1 wording changes fails here by name, instead of turning 409s, 412s and dry runs into 500s.
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import {
  commitBatch,
  database,
  isCheckFailure,
  isConstraintFailure,
  isNotNullFailure,
  isUniqueFailure,
  raise,
  raisedText,
  type Statement,
} from "../../src/shared/db";
import { isStaleRevision, revisionBump } from "../../src/proxy/installation/revisions";

const db = database(env.DB);

/** A table of its own for each test, so that no test sees another's rows. */
async function scratchTable(): Promise<string> {
  const name = `db_test_${crypto.randomUUID().replaceAll("-", "")}`;
  await env.DB.exec(
    `create table ${name} (id integer primary key, a text unique, b text, c text, n text not null default 'x', ` +
      `positive integer check (positive > 0), unique (b, c))`,
  );
  return name;
}

/** The error a batch of `statements` fails with (commitBatch: D1's batch, as the proxy's writes run). */
async function batchFailure(statements: Statement[]): Promise<unknown> {
  return commitBatch(db, statements).then(
    () => expect.unreachable("the batch was expected to fail"),
    (error: unknown) => error,
  );
}

/** The error one drizzle statement fails with (db.run: drizzle over D1, as the news and rate limit stores run). */
async function drizzleFailure(statement: ReturnType<typeof sql>): Promise<unknown> {
  return db.run(statement).then(
    () => expect.unreachable("the statement was expected to fail"),
    (error: unknown) => error,
  );
}

/** Every message of the error and the errors it wraps, one per line. */
function messages(error: unknown): string {
  const found: string[] = [];
  for (let current: unknown = error; current instanceof Error; current = current.cause) found.push(current.message);
  return found.join("\n");
}

const kinds = (error: unknown, table: string) => ({
  constraint: isConstraintFailure(error),
  unique: isUniqueFailure(error),
  uniqueA: isUniqueFailure(error, `${table}.a`),
  uniqueBC: isUniqueFailure(error, `${table}.b, ${table}.c`),
  notNullN: isNotNullFailure(error, `${table}.n`),
  check: isCheckFailure(error),
  raised: raisedText(error),
});
const none = { constraint: false, unique: false, uniqueA: false, uniqueBC: false, notNullN: false, check: false };

describe("D1 error wording", () => {
  it("names a unique index by its columns, through a D1 batch and through drizzle", async () => {
    const t = await scratchTable();
    await env.DB.prepare(`insert into ${t} (a, b, c) values ('one', 'x', 'y')`).run();
    for (const error of [
      await batchFailure([sql.raw(`insert into ${t} (a) values ('one')`)]),
      await drizzleFailure(sql.raw(`insert into ${t} (a) values ('one')`)),
    ]) {
      expect(messages(error)).toContain(`UNIQUE constraint failed: ${t}.a`);
      expect(kinds(error, t)).toEqual({ ...none, constraint: true, unique: true, uniqueA: true, raised: undefined });
    }
    const composite = await batchFailure([sql.raw(`insert into ${t} (b, c) values ('x', 'y')`)]);
    expect(messages(composite)).toContain(`UNIQUE constraint failed: ${t}.b, ${t}.c`);
    expect(kinds(composite, t)).toEqual({ ...none, constraint: true, unique: true, uniqueBC: true, raised: undefined });
  });

  it("names the NOT NULL column that refused a NULL", async () => {
    const t = await scratchTable();
    const error = await drizzleFailure(sql.raw(`insert into ${t} (n) values (null)`));
    expect(messages(error)).toContain(`NOT NULL constraint failed: ${t}.n`);
    expect(kinds(error, t)).toEqual({ ...none, constraint: true, notNullN: true, raised: undefined });
  });

  it("says CHECK constraint failed when a CHECK refuses the write", async () => {
    const t = await scratchTable();
    const error = await drizzleFailure(sql.raw(`insert into ${t} (positive) values (0)`));
    expect(messages(error)).toContain("CHECK constraint failed");
    expect(kinds(error, t)).toEqual({ ...none, constraint: true, check: true, raised: undefined });
  });

  it("quotes the text a raise() expression failed with, and fails nothing when it is not evaluated", async () => {
    const t = await scratchTable();
    const error = await batchFailure([
      sql.raw(`insert into ${t} (a) values ('kept?')`),
      sql`select ${raise(sql`${"3:"} || ${"quota of 5 reached"}`)}`,
    ]);
    expect(raisedText(error)).toBe("3:quota of 5 reached");
    expect(kinds(error, t)).toEqual({ ...none, raised: "3:quota of 5 reached" });
    const rows = await env.DB.prepare(`select count(*) as n from ${t}`).first<{ n: number }>();
    expect(rows).toEqual({ n: 0 });
    expect(await commitBatch(db, [sql`select ${raise(sql`'never'`)} where 0`])).toEqual([[]]);
  });

  it("reports the proxy's revision guard and dry-run end as the proxy matches them", async () => {
    const label = `db-test-${crypto.randomUUID()}`;
    const created = await env.DB.prepare("insert into projects (label) values (?) returning id").bind(label).first<{
      id: number;
    }>();
    const stale = await batchFailure([revisionBump(created!.id, { tags: ['"p0.r0"'] })]);
    expect(messages(stale)).toContain("NOT NULL constraint failed: projects.revision");
    expect(isStaleRevision(stale)).toBe(true);
    const dryRunEnd = await batchFailure([sql`insert into projects (label) values (null)`]);
    expect(messages(dryRunEnd)).toContain("NOT NULL constraint failed: projects.label");
    expect([isNotNullFailure(dryRunEnd, "projects.label"), isStaleRevision(dryRunEnd)]).toEqual([true, false]);
  });
});
