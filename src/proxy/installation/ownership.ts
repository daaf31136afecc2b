// Who may hold a domain name (issue 27, item 5), checked inside the write's own batch once its statements ran, so that
// two projects can never claim neighbouring names at once.
import { sql } from "drizzle-orm";
import { Conflict } from "../domain-errors";
import { claimingAncestors, reversedName, selfAndAncestors } from "./domain-names";
import type { Guard } from "./guards";

// A name equal to or under a zone the administrator assigned may be held by the zone's project only, whoever writes it
// (the innermost zone decides). Outside zones a tenant may not hold a name under or above one another project holds
// (`login.beta-corp.example` beside beta's `beta-corp.example`, or `beta-corp.example` when beta holds
// `x.beta-corp.example`); the administrator may. Every lookup is an index one: the names above by exact name, the names
// and zones under by a range of reversed names.

/** A name a write gives to a project: a new domain, or one moved from another project. */
export interface NameClaim {
  domainName: string;
  projectId: number;
}

type Refusal = ["zone" | "under" | "above" | "above-zone", string, string];

const messages: Record<Refusal[0], (name: string, other: string) => string> = {
  zone: (name, zone) => `${name}: inside the zone ${zone}, which is assigned to another project`,
  under: (name, above) => `${name}: under ${above}, which another project holds`,
  // The names under it are not named: another tenant's unpublished names must not leak.
  above: (name) => `${name}: another project holds names under it`,
  "above-zone": (name) => `${name}: a zone under it is assigned to another project`,
};

/** The guard of a write's claims; undefined when it claims nothing. */
export function ownershipGuard(claims: readonly NameClaim[], byAdministrator = false): Guard | undefined {
  if (claims.length === 0) return undefined;
  const rows = claims.map(({ domainName, projectId }) => ({
    n: domainName,
    r: reversedName(domainName),
    p: projectId,
    z: selfAndAncestors(domainName),
    a: claimingAncestors(domainName),
  }));
  const neighbours = byAdministrator
    ? sql``
    : sql`
      union all
      select json_array('under', zoned.n, d.domain_name) from zoned
        join domains d on d.domain_name in (select value from json_each(zoned.a))
        join backends b on b.id = d.backend_id
        where zoned.zone is null and b.project_id <> zoned.p
      union all
      select json_array('above', zoned.n, d.domain_name) from zoned
        join domains d on d.reversed_name > zoned.r || '.' and d.reversed_name < zoned.r || '/'
        join backends b on b.id = d.backend_id
        where zoned.zone is null and b.project_id <> zoned.p
      union all
      select json_array('above-zone', zoned.n, z.name) from zoned
        join zones z on z.reversed_name > zoned.r || '.' and z.reversed_name < zoned.r || '/'
        where zoned.zone is null and z.project_id <> zoned.p`;
  const refusal = sql`(
    with claims as (
      select o.value ->> 'n' as n, o.value ->> 'r' as r, o.value ->> 'p' as p, o.value -> 'z' as z, o.value -> 'a' as a
      from json_each(${JSON.stringify(rows)}) as o
    ),
    zoned as (
      select claims.*, (
        select z.name from zones z where z.name in (select value from json_each(claims.z))
        order by length(z.name) desc limit 1
      ) as zone
      from claims
    )
    select refusal from (
      select json_array('zone', zoned.n, z.name) as refusal from zoned
        join zones z on z.name = zoned.zone
        where z.project_id <> zoned.p
      ${neighbours}
    ) limit 1
  )`;
  return {
    refusal,
    answer: (detail) => {
      const [kind, name, other] = JSON.parse(detail) as Refusal;
      return new Conflict(messages[kind](name, other));
    },
  };
}
