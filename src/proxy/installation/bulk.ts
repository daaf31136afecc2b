// Multi-row writes of the proxy API, for the one D1 batch each request commits (./writes.ts commitWrite).
// Row lists travel as ONE JSON parameter read with json_each: one statement per kind of change whatever the
// number of rows, which keeps D1's limits (100 bound parameters per statement, queries per invocation) away.
import { sql, type SQL } from "drizzle-orm";
import { reversedName } from "./domain-names";

export { inJsonList, type Statement } from "../../shared/db";

/** A domain's stored fields, as the writes below take them. */
export interface DomainFields {
  domainName: string;
  publicCaCertificate: boolean;
  certProvided: boolean;
  redirectToUrl: string | null;
}

const perRowBackendId = sql`o.value ->> 'backendId'`;

/**
 * Inserts domains, each with its reversed name (the ownership checks' index). `backendId` is either per row
 * (`rows[i].backendId`) or one SQL expression for all rows, e.g. a subquery finding a backend inserted earlier in the
 * same batch.
 */
export function insertDomains(rows: (DomainFields & { backendId?: number })[], backendId: SQL = perRowBackendId) {
  const withReversed = rows.map((row) => ({ ...row, reversedName: reversedName(row.domainName) }));
  return sql`
    insert into domains (domain_name, backend_id, public_ca_certificate, cert_provided, redirect_to_url, reversed_name)
    select o.value ->> 'domainName', ${backendId}, o.value ->> 'publicCaCertificate', o.value ->> 'certProvided',
           o.value ->> 'redirectToUrl', o.value ->> 'reversedName'
    from json_each(${JSON.stringify(withReversed)}) as o`;
}

/** Overwrites existing domains by id (moving them when backendId is given) and bumps their version. */
export function updateDomains(rows: (DomainFields & { id: number; backendId?: number })[]) {
  return sql`
    update domains set
      backend_id = coalesce(o.value ->> 'backendId', domains.backend_id),
      public_ca_certificate = o.value ->> 'publicCaCertificate',
      cert_provided = o.value ->> 'certProvided',
      redirect_to_url = o.value ->> 'redirectToUrl',
      version = domains.version + 1
    from json_each(${JSON.stringify(rows)}) as o
    where domains.id = o.value ->> 'id'`;
}

export const deleteDomains = (ids: number[]) =>
  sql`delete from domains where id in (select value from json_each(${JSON.stringify(ids)}))`;

export function insertBackendContainers(rows: { containerId: number; params: string | null }[], backendId: SQL) {
  return sql`
    insert into backend_containers (backend_id, container_id, params)
    select ${backendId}, o.value ->> 'containerId', o.value ->> 'params'
    from json_each(${JSON.stringify(rows)}) as o`;
}

export function updateBackendContainers(rows: { id: number; params: string | null }[]) {
  return sql`
    update backend_containers set params = o.value ->> 'params', version = backend_containers.version + 1
    from json_each(${JSON.stringify(rows)}) as o
    where backend_containers.id = o.value ->> 'id'`;
}

export const deleteBackendContainers = (ids: number[]) =>
  sql`delete from backend_containers where id in (select value from json_each(${JSON.stringify(ids)}))`;
