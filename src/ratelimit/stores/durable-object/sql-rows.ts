// The rows of one counter object in its own SQLite database: the CounterRows port of core/counter-table.ts. Every
// call is synchronous, and what one call writes (rows and alarm) is one implicit transaction, so one commit.
import type { CounterRow, CounterRows } from "../../core/counter-table";

const CREATE_TABLE =
  "CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, count INTEGER NOT NULL, window_end INTEGER NOT NULL) WITHOUT ROWID";
const CREATE_INDEX = "CREATE INDEX IF NOT EXISTS counters_by_window_end ON counters (window_end)";
const UPSERT =
  "INSERT INTO counters (key, count, window_end) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET count = excluded.count, window_end = excluded.window_end";

export class SqlCounterRows implements CounterRows {
  /** Whether the table exists; undefined until first asked (a new object has no database to read at all). */
  private tableExists: boolean | undefined;

  constructor(private readonly storage: DurableObjectStorage) {}

  private hasTable(): boolean {
    this.tableExists ??=
      this.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'counters'").toArray().length >
      0;
    return this.tableExists;
  }

  find(key: string): CounterRow | undefined {
    if (!this.hasTable()) return undefined;
    const [row] = this.storage.sql
      .exec<{ count: number; window_end: number }>("SELECT count, window_end FROM counters WHERE key = ?", key)
      .toArray();
    return row ? { key, count: row.count, windowEnd: row.window_end } : undefined;
  }

  commit(rows: CounterRow[], alarmAtMs: number | undefined): void {
    const sql = this.storage.sql;
    if (!this.hasTable()) {
      sql.exec(CREATE_TABLE);
      sql.exec(CREATE_INDEX);
      this.tableExists = true;
    }
    for (const row of rows) sql.exec(UPSERT, row.key, row.count, row.windowEnd);
    // Not awaited: set in the same turn, it joins the rows' implicit transaction.
    if (alarmAtMs !== undefined) void this.storage.setAlarm(alarmAtMs);
  }

  earliestWindowEnd(): number | undefined {
    if (!this.hasTable()) return undefined;
    const [row] = this.storage.sql.exec<{ earliest: number | null }>(
      "SELECT MIN(window_end) AS earliest FROM counters",
    );
    return row?.earliest ?? undefined;
  }

  deleteClosed(nowSeconds: number, limit: number): number {
    if (!this.hasTable()) return 0;
    return this.storage.sql.exec(
      "DELETE FROM counters WHERE key IN (SELECT key FROM counters WHERE window_end <= ? LIMIT ?)",
      nowSeconds,
      limit,
    ).rowsWritten;
  }

  /** Drops the whole database (rows, table, alarm), so an emptied object costs nothing while it is not used. */
  async dropAll(): Promise<void> {
    this.tableExists = false;
    await this.storage.deleteAll();
  }
}
