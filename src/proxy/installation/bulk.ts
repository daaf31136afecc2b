// Multi-row writes of the proxy API, for the one D1 batch each request commits (./writes.ts commitWrite).
// Row lists travel as ONE JSON parameter read with json_each: one statement per kind of change whatever the
// number of rows, which keeps D1's limits (100 bound parameters per statement, queries per invocation) away.
import { sql, type SQL } from "drizzle-orm";
import type { Statement } from "../../shared/db";
import { reversedName } from "./domain-names";
import { changedExactly, stillHolds } from "./guards";

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

/**
 * A stored domain as the request read it: its id and the backend it was in. The writes below act on it only while it is
 * still there, and fail the whole batch otherwise (guards.ts changedExactly): the request checked the caller's access
 * to the project it read, and a domain a concurrent request moved meanwhile may be in a project the caller cannot see.
 */
export interface ReadDomain {
  id: number;
  readBackendId: number;
  /**
   * Whether it asked for a public CA certificate when read: an update acts on it only while it still does, since the
   * request's quota check counted it as it was (a concurrent request that cleared the flag let a third one claim that
   * room).
   */
  readPublicCa?: boolean;
}

/**
 * Overwrites existing domains (moving them when backendId is given) and bumps their version; with its check, so that
 * the batch fails when one is no longer where it was read. Ids must be distinct.
 */
export function updateDomains(rows: (DomainFields & ReadDomain & { backendId?: number })[]): Statement[] {
  const update = sql`
    update domains set
      backend_id = coalesce(o.value ->> 'backendId', domains.backend_id),
      public_ca_certificate = o.value ->> 'publicCaCertificate',
      cert_provided = o.value ->> 'certProvided',
      redirect_to_url = o.value ->> 'redirectToUrl',
      version = domains.version + 1
    from json_each(${JSON.stringify(rows)}) as o
    where domains.id = o.value ->> 'id' and domains.backend_id = o.value ->> 'readBackendId'
      and (o.value ->> 'readPublicCa' is null or domains.public_ca_certificate = o.value ->> 'readPublicCa')`;
  return [update, changedExactly(rows.length)];
}

/** Deletes domains that are still where they were read, with the check failing the batch otherwise. Distinct ids. */
export function deleteDomains(rows: ReadDomain[]): Statement[] {
  // The join picks the rows by primary key, one lookup per listed domain; the IN then deletes by rowid.
  const deletion = sql`
    delete from domains where id in (
      select d.id from json_each(${JSON.stringify(rows)}) as o
      join domains d on d.id = o.value ->> 'id' and d.backend_id = o.value ->> 'readBackendId')`;
  return [deletion, changedExactly(rows.length)];
}

export function insertBackendContainers(rows: { containerId: number; params: string | null }[], backendId: SQL) {
  return sql`
    insert into backend_containers (backend_id, container_id, params)
    select ${backendId}, o.value ->> 'containerId', o.value ->> 'params'
    from json_each(${JSON.stringify(rows)}) as o`;
}

/**
 * Updates the params of a backend's container links the request read (by id), bumping their version; with its check,
 * so that the batch fails when one is no longer there (a concurrent request removed it). Ids must be distinct.
 */
export function updateBackendContainers(backendId: SQL, rows: { id: number; params: string | null }[]): Statement[] {
  const update = sql`
    update backend_containers set params = o.value ->> 'params', version = backend_containers.version + 1
    from json_each(${JSON.stringify(rows)}) as o
    where backend_containers.id = o.value ->> 'id' and backend_containers.backend_id = ${backendId}`;
  return [update, changedExactly(rows.length)];
}

/** Deletes a backend's container links the request read, with the check failing the batch when one is gone. */
export function deleteBackendContainers(backendId: SQL, ids: number[]): Statement[] {
  const deletion = sql`
    delete from backend_containers
    where backend_id = ${backendId} and id in (select value from json_each(${JSON.stringify(ids)}))`;
  return [deletion, changedExactly(ids.length)];
}

/**
 * The check to follow the writes of a backend's whole set of container links: the batch fails unless the backend
 * holds exactly `count`, the links the request wants (with the checks above, its links are all there), so that a
 * link a concurrent request added meanwhile fails the write.
 */
export const holdsContainers = (backendId: SQL, count: number): Statement =>
  stillHolds(sql`(select count(*) from backend_containers where backend_id = ${backendId}) = ${count}`);
