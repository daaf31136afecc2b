// Counting D1 work: a D1Database that hands every call to the binding unchanged and adds what it cost to a usage
// record (round trips, statements, and the rows D1 reports written and read). The Worker meters a request with it when
// D1_USAGE_HEADER is on (src/shared/d1-usage.ts); the benchmarks' floor Workers (bench/d1-floor, bench/news-floor) use
// it too, so that both sides of a comparison are counted the same way. It imports nothing of the runtime.

/** What D1 work cost, as D1 reports it. */
export interface D1Usage {
  /** Round trips to D1: one per query, one per batch, one per exec. */
  calls: number;
  /** Statements run: one per query, each statement of a batch, each line of an exec. */
  statements: number;
  /** The sum of `meta.rows_written` of the statements D1 answered with their meta. */
  rowsWritten: number;
  /** The sum of `meta.rows_read` of the same statements. */
  rowsRead: number;
  /**
   * Statements whose rows are in neither sum: D1 answers raw() (what drizzle's selects and `returning()` use), first()
   * and exec() without the meta, and a failed call with none.
   */
  unmetered: number;
}

export const emptyD1Usage = (): D1Usage => ({ calls: 0, statements: 0, rowsWritten: 0, rowsRead: 0, unmetered: 0 });

/** The `Server-Timing` entry of a usage: `d1;desc="calls=1 statements=1 rows_written=0 rows_read=2 unmetered=0"`. */
export const d1ServerTiming = (usage: D1Usage): string =>
  `d1;desc="calls=${usage.calls} statements=${usage.statements} rows_written=${usage.rowsWritten} ` +
  `rows_read=${usage.rowsRead} unmetered=${usage.unmetered}"`;

/** The usage a call adds to when it is made; none: the call is not counted. */
export type UsageOf = () => D1Usage | undefined;

type Meta = Partial<Pick<D1Meta, "rows_read" | "rows_written">> | undefined;

/** Adds one call of `statements` statements, then each statement's rows from `metasOf(result)` (none: unmetered). */
async function metered<T>(
  usageOf: UsageOf,
  statements: number,
  call: () => Promise<T>,
  metasOf?: (result: T) => readonly Meta[],
): Promise<T> {
  const usage = usageOf();
  if (!usage) return call();
  usage.calls++;
  usage.statements += statements;
  let result: T;
  try {
    result = await call();
  } catch (error) {
    usage.unmetered += statements;
    throw error;
  }
  const metas = metasOf?.(result) ?? [];
  for (let i = 0; i < statements; i++) {
    const meta = metas[i];
    if (typeof meta?.rows_read === "number" && typeof meta.rows_written === "number") {
      usage.rowsRead += meta.rows_read;
      usage.rowsWritten += meta.rows_written;
    } else usage.unmetered++;
  }
  return result;
}

const metaOf = (result: D1Response): Meta[] => [result.meta];

/** A prepared statement whose runs are counted; `inner` is the binding's, which a batch is given. */
class MeteredStatement implements D1PreparedStatement {
  constructor(
    readonly inner: D1PreparedStatement,
    private readonly usageOf: UsageOf,
  ) {}

  bind(...values: unknown[]): D1PreparedStatement {
    return new MeteredStatement(this.inner.bind(...values), this.usageOf);
  }

  first<T = unknown>(colName: string): Promise<T | null>;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  first<T>(colName?: string): Promise<T | null> {
    return metered(this.usageOf, 1, () =>
      colName === undefined ? this.inner.first<T>() : this.inner.first<T>(colName),
    );
  }

  run<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    return metered(this.usageOf, 1, () => this.inner.run<T>(), metaOf);
  }

  all<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    return metered(this.usageOf, 1, () => this.inner.all<T>(), metaOf);
  }

  raw<T = unknown[]>(options: { columnNames: true }): Promise<[string[], ...T[]]>;
  raw<T = unknown[]>(options?: { columnNames?: false }): Promise<T[]>;
  raw<T>(options?: { columnNames?: boolean }): Promise<T[] | [string[], ...T[]]> {
    const inner = this.inner as { raw(options?: { columnNames?: boolean }): Promise<T[] | [string[], ...T[]]> };
    return metered(this.usageOf, 1, () => inner.raw(options));
  }
}

/** The binding's statement of a statement, metered or not: the binding's batch reads its own statements only. */
const unwrapped = (statement: D1PreparedStatement) =>
  statement instanceof MeteredStatement ? statement.inner : statement;

/** A batch of statements, counted as one call. */
function meteredBatch<T>(
  usageOf: UsageOf,
  batch: (statements: D1PreparedStatement[]) => Promise<D1Result<T>[]>,
  statements: D1PreparedStatement[],
): Promise<D1Result<T>[]> {
  return metered(
    usageOf,
    statements.length,
    () => batch(statements.map(unwrapped)),
    (results) => results.map((result) => result.meta),
  );
}

class MeteredDatabase implements D1Database {
  constructor(
    private readonly inner: D1Database,
    private readonly usageOf: UsageOf,
  ) {}

  prepare(query: string): D1PreparedStatement {
    return new MeteredStatement(this.inner.prepare(query), this.usageOf);
  }

  batch<T = unknown>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    return meteredBatch(this.usageOf, (s) => this.inner.batch<T>(s), statements);
  }

  async exec(query: string): Promise<D1ExecResult> {
    const usage = this.usageOf();
    if (!usage) return this.inner.exec(query);
    // How many statements an exec ran is known from its answer only (D1 gives no rows for them).
    usage.calls++;
    const result = await this.inner.exec(query);
    usage.statements += result.count;
    usage.unmetered += result.count;
    return result;
  }

  withSession(constraintOrBookmark?: string): D1DatabaseSession {
    const session = this.inner.withSession(constraintOrBookmark);
    const usageOf = this.usageOf;
    return {
      prepare: (query) => new MeteredStatement(session.prepare(query), usageOf),
      batch: <T>(statements: D1PreparedStatement[]) => meteredBatch(usageOf, (s) => session.batch<T>(s), statements),
      getBookmark: () => session.getBookmark(),
    };
  }

  dump(): Promise<ArrayBuffer> {
    return metered(this.usageOf, 0, () => this.inner.dump());
  }
}

/** `d1` with every call counted into the usage `usageOf` answers at the time of the call (none: not counted). */
export const meteredD1 = (d1: D1Database, usageOf: UsageOf): D1Database => new MeteredDatabase(d1, usageOf);
