// Hosts (administration): machines that run containers, registered before containers refer to them.
import { asc, eq, sql } from "drizzle-orm";
import type { Database, Statement } from "../../shared/db";
import type { Ipv6Network } from "./addresses";
import { Conflict } from "../domain-errors";
import { addressChanges, storableAddress } from "./containers";
import type { HostCreate } from "./inputs";
import { revisionBumpWhere } from "./revisions";
import { containers, hosts } from "./tables";
import { hostView } from "./views";
import { commitWrite, nextId, tableRow, type WriteControl } from "./writes";

const hostListItem = (row: typeof hosts.$inferSelect) => ({ hostId: row.id, ...hostView(row) });

/**
 * Registers the host, or updates the ipv6 of the host with that name (refused addresses as for containers, and a
 * container's address: 409). The projects with containers on the host show its address: their revisions are bumped.
 */
export async function upsertHost(
  db: Database,
  input: HostCreate,
  addressExceptions: readonly Ipv6Network[] = [],
  control: WriteControl = {},
) {
  storableAddress(input.ipv6, addressExceptions);
  const [existing] = await db.select().from(hosts).where(eq(hosts.hostname, input.hostname)).limit(1);
  const statements: Statement[] = [
    db
      .insert(hosts)
      .values(input)
      .onConflictDoUpdate({
        target: hosts.hostname,
        set: { ipv6: sql`excluded.ipv6`, version: sql`${hosts.version} + 1` },
      })
      .returning(),
  ];
  if (existing) {
    statements.push(
      revisionBumpWhere(
        sql`select ${containers.projectId} from ${containers} where ${containers.hostId} = ${existing.id}`,
      ),
    );
  }
  const summary = {
    action: existing ? "update" : "create",
    hostname: input.hostname,
    hostId: existing ? existing.id : sql`(select id from ${hosts} where ${hosts.hostname} = ${input.hostname})`,
    ipv6: input.ipv6,
  };
  // A container at the address would then be the host: the SSH proxy's shared key and HAProxy would reach it.
  const taken = {
    refusal: sql`(select 'container' from ${containers} where ${containers.ipv6} = ${input.ipv6} limit 1)`,
    answer: () => new Conflict(`Invalid host: address ${input.ipv6} is already used by a container`),
  };
  const { rows } = await commitWrite(db, control, {
    what: "Unable to process host update",
    projects: [],
    statements,
    guards: !existing || addressChanges(existing.ipv6, input.ipv6) ? [taken] : [],
    changes: [{ projectLabel: null, summary }],
  });
  if (rows) return hostListItem(tableRow(hosts, rows[0][0]));
  return hostListItem(
    existing
      ? { ...existing, ipv6: input.ipv6, version: existing.version + 1 }
      : { id: await nextId(db, "hosts"), ...input, version: 0 },
  );
}

export async function listHosts(db: Database) {
  const rows = await db.select().from(hosts).orderBy(asc(hosts.hostname));
  return rows.map(hostListItem);
}
