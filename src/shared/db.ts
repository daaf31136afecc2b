// The drizzle handle over the D1 binding, shared by the services' repositories.
import { drizzle } from "drizzle-orm/d1";

export type Database = ReturnType<typeof drizzle>;

export const database = (d1: D1Database): Database => drizzle(d1);
