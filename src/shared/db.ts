// The drizzle handle over the D1 binding, shared by the services' repositories. One handle per binding
// object: building drizzle's dialect and session on every request would cost more than most queries.
import { drizzle } from "drizzle-orm/d1";

export type Database = ReturnType<typeof drizzle>;

const handles = new WeakMap<D1Database, Database>();

export function database(d1: D1Database): Database {
  let handle = handles.get(d1);
  if (!handle) handles.set(d1, (handle = drizzle(d1)));
  return handle;
}
