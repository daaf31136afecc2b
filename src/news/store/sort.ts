// The order a list is read in: sort keys (the routes parse them from querymen's `sort`) turned into ORDER BY terms.
import { asc, desc, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

export interface SortKey<F extends string> {
  field: F;
  descending: boolean;
}

/** ORDER BY terms for the keys, each naming one of `columns`; the caller appends its tie-breaker. */
export const orderOf = <F extends string>(keys: SortKey<F>[], columns: Record<F, SQLiteColumn>): SQL[] =>
  keys.map(({ field, descending }) => (descending ? desc : asc)(columns[field]));
