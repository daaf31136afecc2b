// Hosts (administration): machines that run containers, registered before containers refer to them.
import { asc, sql } from "drizzle-orm";
import type { Database } from "../../shared/db";
import type { Ipv6Network } from "./addresses";
import { storableAddress } from "./containers";
import type { HostCreate } from "./inputs";
import { hosts } from "./tables";
import { hostView } from "./views";

const hostListItem = (row: typeof hosts.$inferSelect) => ({ hostId: row.id, ...hostView(row) });

/** Registers the host, or updates the ipv6 of the host with that name (refused addresses as for containers). */
export async function upsertHost(db: Database, input: HostCreate, addressExceptions: readonly Ipv6Network[] = []) {
  storableAddress(input.ipv6, addressExceptions);
  const [row] = await db
    .insert(hosts)
    .values(input)
    .onConflictDoUpdate({
      target: hosts.hostname,
      set: { ipv6: sql`excluded.ipv6`, version: sql`${hosts.version} + 1` },
    })
    .returning();
  return hostListItem(row);
}

export async function listHosts(db: Database) {
  const rows = await db.select().from(hosts).orderBy(asc(hosts.hostname));
  return rows.map(hostListItem);
}
