// The metered D1 binding (src/shared/d1-meter.ts) over the real D1 of workerd: each kind of call counted as D1 makes
// it (a query or a batch is one call), the rows D1 reports where it reports them, and answers unchanged.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { d1ServerTiming, emptyD1Usage, meteredD1, type D1Usage } from "../../src/shared/d1-meter";

/** A table of its own for each test (no index but the rowid), holding the rows 1, 2 and 3. */
async function scratchTable(): Promise<string> {
  const name = `meter_test_${crypto.randomUUID().replaceAll("-", "")}`;
  await env.DB.exec(`create table ${name} (id integer primary key, v text)`);
  await env.DB.prepare(`insert into ${name} (id, v) values (1, 'a'), (2, 'b'), (3, 'c')`).run();
  return name;
}

describe("meteredD1", () => {
  let table: string;
  let usage: D1Usage;
  let db: D1Database;

  beforeEach(async () => {
    table = await scratchTable();
    usage = emptyD1Usage();
    db = meteredD1(env.DB, () => usage);
  });

  it("counts a run() with the rows D1 reports written", async () => {
    const result = await db.prepare(`insert into ${table} (id, v) values (?, ?), (?, ?)`).bind(4, "d", 5, "e").run();
    expect(result.meta.changes).toBe(2);
    // SQLite counts the rowid lookups of the insert as rows read: the usage holds what D1 reported.
    expect(usage).toEqual({ calls: 1, statements: 1, rowsWritten: 2, rowsRead: result.meta.rows_read, unmetered: 0 });
  });

  it("counts an all() with the rows D1 reports read, and answers its rows", async () => {
    const { results } = await db.prepare(`select v from ${table} order by id`).all();
    expect(results).toEqual([{ v: "a" }, { v: "b" }, { v: "c" }]);
    expect(usage).toEqual({ calls: 1, statements: 1, rowsWritten: 0, rowsRead: 3, unmetered: 0 });
  });

  it("counts a batch as one call of its statements, each with its rows", async () => {
    const results = await db.batch([
      db.prepare(`update ${table} set v = 'z' where id = ?`).bind(1),
      env.DB.prepare(`delete from ${table} where id in (2, 3)`),
      db.prepare(`select count(*) as n from ${table}`),
    ]);
    expect(results.map((result) => result.results)).toEqual([[], [], [{ n: 1 }]]);
    expect(results.map((result) => result.meta.rows_written)).toEqual([1, 2, 0]);
    const rowsRead = results.reduce((sum, result) => sum + result.meta.rows_read, 0);
    expect(rowsRead).toBeGreaterThanOrEqual(4);
    expect(usage).toEqual({ calls: 1, statements: 3, rowsWritten: 3, rowsRead, unmetered: 0 });
  });

  it("counts raw() and first() as unmetered statements, their answers unchanged", async () => {
    expect(await db.prepare(`select id, v from ${table} where id = 2`).raw()).toEqual([[2, "b"]]);
    expect(await db.prepare(`select id from ${table} where id = 3`).raw({ columnNames: true })).toEqual([["id"], [3]]);
    expect(await db.prepare(`select v from ${table} where id = 1`).first("v")).toBe("a");
    expect(await db.prepare(`select v from ${table} where id = 9`).first()).toBeNull();
    expect(usage).toEqual({ calls: 4, statements: 4, rowsWritten: 0, rowsRead: 0, unmetered: 4 });
  });

  it("counts an exec as one call of its lines, unmetered", async () => {
    const result = await db.exec(`update ${table} set v = 'x' where id = 1\nupdate ${table} set v = 'y' where id = 2`);
    expect(result.count).toBe(2);
    expect(usage).toEqual({ calls: 1, statements: 2, rowsWritten: 0, rowsRead: 0, unmetered: 2 });
  });

  it("counts a failed call as unmetered and throws D1's error", async () => {
    const failure = await db
      .prepare(`insert into ${table} (id, v) values (1, 'again')`)
      .run()
      .catch((error: unknown) => error);
    expect(String(failure)).toMatch(/UNIQUE constraint failed/);
    expect(usage).toEqual({ calls: 1, statements: 1, rowsWritten: 0, rowsRead: 0, unmetered: 1 });
  });

  it("counts nothing while no usage is in scope", async () => {
    let current: D1Usage | undefined;
    const scoped = meteredD1(env.DB, () => current);
    await scoped.prepare(`select 1`).all();
    current = usage;
    await scoped.prepare(`select 1`).all();
    expect(usage.calls).toBe(1);
  });

  it("writes the Server-Timing entry", () => {
    const entry = d1ServerTiming({ calls: 2, statements: 5, rowsWritten: 7, rowsRead: 11, unmetered: 1 });
    expect(entry).toBe('d1;desc="calls=2 statements=5 rows_written=7 rows_read=11 unmetered=1"');
  });
});
