// Backends: create-or-update by label within a project (domain forwardings and container references are
// replaced wholesale when given), and switching a backend to the containers of another one.
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../shared/db";
import {
  deleteBackendContainers,
  deleteDomains,
  holdsContainers,
  inJsonList,
  insertBackendContainers,
  insertDomains,
  updateBackendContainers,
  updateDomains,
  type DomainFields,
  type Statement,
} from "./bulk";
import { invalidRedirect, isValidRedirectUrl } from "./redirects";
import { CannotProcess, Invalid, invalidBackend } from "../domain-errors";
import { checkChangedParams, checkSwitchedServers, type ParamsCheck } from "./backend-check";
import { ownershipGuard, type NameClaim } from "./ownership";
import { type BackendParams, describeProblem, vetBackendParams, vetServerParams } from "../haproxy-params/index";
import { paramsBytes, quotaGuards, type Measure } from "./quotas";
import type { BackendContainerRow, BackendRow, DomainRow, ProjectRow } from "./rows";
import type { BackendInput } from "./inputs";
import { backendContainers, backends, containers, domains } from "./tables";
import { commitWrite, listed, nextId, type WriteControl } from "./writes";

type Reference = { containerId: number; params: string | null };

/** What the repository needs from the installation's settings. */
export interface BackendOptions {
  /** HAPROXY_PARAMS_EXTRA_DIRECTIVES: directives backend params may use besides the built-in allow-list. */
  extraDirectives: readonly string[];
  /** The real HAProxy's check of changed params, where an agent is configured (backend-check.ts). */
  checkParams?: ParamsCheck;
}

export async function resolveBackend(db: Database, project: ProjectRow, label: string): Promise<BackendRow> {
  const [row] = await db
    .select()
    .from(backends)
    .where(and(eq(backends.projectId, project.id), eq(backends.label, label)))
    .limit(1);
  if (!row) throw invalidBackend(label);
  return row;
}

/** Checks the posted domain forwardings: unique, valid redirect URLs, not serving another backend. */
async function checkDomainForwardings(db: Database, input: BackendInput, existing: BackendRow | undefined) {
  const list = input.domainForwardings ?? [];
  const seen = new Set<string>();
  for (const domain of list) {
    if (seen.has(domain.domainName)) throw new CannotProcess(`${domain.domainName}: disallowed duplicate domain`);
    seen.add(domain.domainName);
    const url = domain.redirectToUrl;
    if (url != null && !isValidRedirectUrl(url)) throw new CannotProcess(invalidRedirect(domain.domainName, url));
  }
  if (list.length === 0) return;
  const taken = await db
    .select({ domainName: domains.domainName, backendId: domains.backendId })
    .from(domains)
    .where(inJsonList(domains.domainName, [...seen]));
  const elsewhere = taken.find((row) => row.backendId !== existing?.id);
  // Moving a domain between backends is the mass update's job, which checks access to its current project.
  if (elsewhere) throw new CannotProcess(`${elsewhere.domainName}: domain is already assigned to another backend`);
}

/** Refuses posted params HAProxy would read as more than tuning of this backend (400 naming the line and reason). */
function checkPostedParams(input: BackendInput, options: BackendOptions): BackendParams | undefined {
  if (input.params == null) return undefined;
  const vetted = vetBackendParams(input.params, options.extraDirectives);
  if (!vetted.ok) throw new Invalid(describeProblem("params", vetted.error));
  return vetted.value;
}

/**
 * Refuses posted server params the vetting refuses with what the backend's default-server sets (`posted`, the posted
 * params vetted, else the stored ones). Without posted params only a server the write adds or changes is vetted, and
 * the stored params only then: the others are as stored, and stored params refused are left out at generation.
 */
function checkServerParams(
  input: BackendInput,
  options: BackendOptions,
  backend: { existing: BackendRow | undefined; posted: BackendParams | undefined; stored: readonly Reference[] },
): void {
  const { existing, posted, stored } = backend;
  const storedParams = new Map(stored.map((link) => [link.containerId, link.params ?? ""]));
  const servers = (input.backendContainers ?? [])
    .map((reference, index) => ({ ...reference, index }))
    .filter((server) => posted !== undefined || storedParams.get(server.containerId) !== (server.params ?? ""));
  if (servers.length === 0) return;
  // Stored params the vetting refuses leave their backend out of the file: the servers inherit nothing from them.
  const own = posted || !existing?.params ? undefined : vetBackendParams(existing.params, options.extraDirectives);
  const defaults = posted ?? (own?.ok ? own.value : undefined);
  for (const { params, index } of servers) {
    const vetted = vetServerParams(params, defaults);
    if (!vetted.ok) throw new Invalid(describeProblem(`backendContainers[${index}].params`, vetted.error));
  }
}

/**
 * Refuses posted params whose default-server conflicts with a server the backend keeps (no TLS version left, which
 * HAProxy refuses; check-alpn set on both, which crashes it): its stored server params are vetted again with them
 * (`backend`, the posted params vetted). Stored server params refused anyway are left out at generation, and are not
 * the write's concern.
 */
function checkKeptServers(
  input: BackendInput,
  backend: BackendParams | undefined,
  kept: readonly BackendContainerRow[],
): void {
  if (input.params == null || input.backendContainers !== undefined || backend === undefined) return;
  for (const link of kept) {
    const server = vetServerParams(link.params, backend);
    if (!server.ok && vetServerParams(link.params).ok) {
      throw new Invalid(
        `params: the server of container ${link.containerId} conflicts with this default-server (${server.error.reason})`,
      );
    }
  }
}

/** Checks the posted container references: unique, and each container belongs to the project. */
async function checkBackendContainers(db: Database, project: ProjectRow, input: BackendInput) {
  const ids = (input.backendContainers ?? []).map((reference) => reference.containerId);
  // One pass with a Set (the list may hold MAX_BACKEND_LIST_ITEMS): the first id met a second time is named.
  const seen = new Set<number>();
  for (const id of ids) {
    if (seen.has(id)) throw new CannotProcess(`Backend container with ID ${id} is listed twice`);
    seen.add(id);
  }
  if (ids.length === 0) return;
  const rows = await db
    .select({ id: containers.id })
    .from(containers)
    .where(and(eq(containers.projectId, project.id), inJsonList(containers.id, ids)));
  const found = new Set(rows.map((row) => row.id));
  const missing = ids.find((id) => !found.has(id));
  // One message for "missing" and "in another project", so ids of other projects are not revealed.
  if (missing !== undefined) {
    throw new CannotProcess(`Backend container with ID ${missing} does not exist in project ${project.label}`);
  }
}

const domainFields = (domain: NonNullable<BackendInput["domainForwardings"]>[number]): DomainFields => ({
  domainName: domain.domainName,
  publicCaCertificate: domain.publicCaCertificate ?? false,
  certProvided: domain.certProvided ?? false,
  redirectToUrl: domain.redirectToUrl ?? null,
});

/**
 * Statements turning the backend's container references into `wanted`: references to the same container
 * are updated in place (version + 1), the others deleted or inserted. They fail the batch unless they changed the
 * references the request read and leave the backend with exactly `wanted` (bulk.ts): two concurrent switches of one
 * backend would otherwise both delete its old links and leave the containers of both targets.
 */
function replaceReferences(backendId: SQL, current: (typeof backendContainers.$inferSelect)[], wanted: Reference[]) {
  const currentByContainer = new Map(current.map((row) => [row.containerId, row]));
  const wantedIds = new Set(wanted.map((reference) => reference.containerId));
  const removals = current.filter((row) => !wantedIds.has(row.containerId)).map((row) => row.id);
  const updates = wanted
    .filter((reference) => currentByContainer.has(reference.containerId))
    .map((reference) => ({ id: currentByContainer.get(reference.containerId)!.id, params: reference.params }));
  const inserts = wanted.filter((reference) => !currentByContainer.has(reference.containerId));
  const statements: Statement[] = [];
  if (removals.length) statements.push(...deleteBackendContainers(backendId, removals));
  if (updates.length) statements.push(...updateBackendContainers(backendId, updates));
  if (inserts.length) statements.push(insertBackendContainers(inserts, backendId));
  statements.push(holdsContainers(backendId, wanted.length));
  return statements;
}

/** The ids added to and removed from a list, for the audit log. */
function listChange<T extends string | number>(before: readonly T[], after: readonly T[]) {
  const kept = new Set(before);
  const wanted = new Set(after);
  return {
    added: listed(after.filter((item) => !kept.has(item))),
    removed: listed(before.filter((i) => !wanted.has(i))),
  };
}

/**
 * The audit summary of a backend's create or update: the fields given, and how its domains and containers changed
 * when the request replaces them (`wanted` given).
 */
function backendSummary(
  change: { action: "create" | "update"; backendLabel: string; backendId: number | SQL; fields: readonly string[] },
  current: { domains: readonly string[]; containers: readonly number[] },
  wanted: { domains?: readonly { domainName: string }[]; references?: readonly { containerId: number }[] },
) {
  return {
    ...change,
    ...(wanted.domains && {
      domains: listChange(
        current.domains,
        wanted.domains.map((domain) => domain.domainName),
      ),
    }),
    ...(wanted.references && {
      containers: listChange(
        current.containers,
        wanted.references.map((reference) => reference.containerId),
      ),
    }),
  };
}

type Wanted = { domains?: DomainFields[]; references?: Reference[] };
type Current = { domains: DomainRow[]; references: BackendContainerRow[] };

const sumParams = (references: readonly { params: string | null }[]) =>
  references.reduce((sum, reference) => sum + paramsBytes(reference.params), 0);

/** What a backend write makes its project hold more of (quotas.ts checks only that), from what it read. */
function backendGrowth(existing: BackendRow | undefined, input: BackendInput, current: Current, wanted: Wanted) {
  const measures: Measure[] = existing ? [] : ["backends"];
  const known = new Map(current.domains.map((row) => [row.domainName, row]));
  const domainsWanted = wanted.domains ?? [];
  if (domainsWanted.some((domain) => !known.has(domain.domainName))) measures.push("domains");
  if (domainsWanted.some((domain) => domain.publicCaCertificate && !known.get(domain.domainName)?.publicCaCertificate))
    measures.push("publicCaDomains");
  const linked = new Set(current.references.map((reference) => reference.containerId));
  if ((wanted.references ?? []).some((reference) => !linked.has(reference.containerId))) measures.push("servers");
  const paramsBefore = (input.params != null ? paramsBytes(existing?.params) : 0) + sumParams(current.references);
  const paramsAfter =
    (input.params != null ? paramsBytes(input.params) : 0) + sumParams(wanted.references ?? current.references);
  if (paramsAfter > paramsBefore) measures.push("paramsBytes");
  return measures;
}

/** The guards of a backend write: the names it gives the project, and the quotas of what it adds. */
function backendGuards(project: ProjectRow, claims: NameClaim[], measures: Measure[], control: WriteControl) {
  const ownership = ownershipGuard(claims, control.byAdministrator);
  return [...(ownership ? [ownership] : []), ...quotaGuards(control.limits, [{ project, measures }])];
}

/**
 * Creates the backend, or updates the one with the same label (only the fields given); returns its id and the
 * project's new ETag. Everything is validated first and written in one D1 batch, with its guards. A create is an
 * update of a backend that holds nothing yet: both write the same way.
 */
export async function upsertBackend(
  db: Database,
  project: ProjectRow,
  input: BackendInput,
  options: BackendOptions,
  control: WriteControl = {},
): Promise<{ id: number; etag: string; warnings: string[] }> {
  const { existing, current, wanted, warnings } = await validateBackendWrite(db, project, input, options);
  const fields = (["fullname", "port", "params"] as const).filter((field) => input[field] != null);
  // A new backend's id is unknown until the batch runs: later statements find it by its unique label.
  const backendId = existing
    ? sql`${existing.id}`
    : sql`(select id from backends where project_id = ${project.id} and label = ${input.label})`;
  const domainWrites = domainStatements(backendId, current.domains, wanted.domains);
  const statements: Statement[] = [
    existing ? updateRow(db, existing, input) : insertRow(db, project, input),
    ...domainWrites.statements,
    ...(wanted.references ? replaceReferences(backendId, current.references, wanted.references) : []),
  ];
  const summary = backendSummary(
    {
      action: existing ? "update" : "create",
      backendLabel: existing?.label ?? input.label,
      backendId: existing?.id ?? backendId,
      fields,
    },
    { domains: current.domains.map((row) => row.domainName), containers: current.references.map((r) => r.containerId) },
    wanted,
  );
  const claims = domainWrites.inserts.map(({ domainName }) => ({ domainName, projectId: project.id }));
  const { rows, etags } = await commitWrite(db, control, {
    projects: [project],
    statements,
    guards: backendGuards(project, claims, backendGrowth(existing, input, current, wanted), control),
    changes: [{ projectLabel: project.label, summary }],
  });
  const id = existing ? existing.id : rows ? (rows[0][0].id as number) : await nextId(db, "backends");
  return { id, etag: etags.get(project.id)!, warnings };
}

/** The validation a create and an update share; returns the stored backend of that label, if any, and what it asks. */
async function validateBackendWrite(db: Database, project: ProjectRow, input: BackendInput, options: BackendOptions) {
  const [existing] = await db
    .select()
    .from(backends)
    .where(and(eq(backends.projectId, project.id), eq(backends.label, input.label)))
    .limit(1);
  const posted = checkPostedParams(input, options);
  const current: Current = existing ? await readCurrent(db, existing) : { domains: [], references: [] };
  checkServerParams(input, options, { existing, posted, stored: current.references });
  checkKeptServers(input, posted, current.references);
  await checkDomainForwardings(db, input, existing);
  await checkBackendContainers(db, project, input);
  const warnings = options.checkParams
    ? await checkChangedParams(db, { project, input, existing, stored: current.references }, options.checkParams)
    : [];
  const wanted: Wanted = {
    domains: input.domainForwardings?.map(domainFields),
    references: input.backendContainers?.map((r) => ({ containerId: r.containerId, params: r.params ?? null })),
  };
  return { existing: existing as BackendRow | undefined, current, wanted, warnings };
}

/** The domains and container references a stored backend holds now. */
async function readCurrent(db: Database, existing: BackendRow): Promise<Current> {
  const [currentDomains, currentReferences] = await db.batch([
    db.select().from(domains).where(eq(domains.backendId, existing.id)),
    db.select().from(backendContainers).where(eq(backendContainers.backendId, existing.id)),
  ]);
  return { domains: currentDomains, references: currentReferences };
}

/** The backend's own row, inserted; it answers its id (the batch's first result). */
function insertRow(db: Database, project: ProjectRow, input: BackendInput): Statement {
  return db
    .insert(backends)
    .values({
      projectId: project.id,
      label: input.label,
      fullname: input.fullname ?? null,
      port: input.port ?? 80,
      params: input.params ?? null,
    })
    .returning({ id: backends.id });
}

/** The backend's own row, updated: only the fields given, and its version bumped. */
function updateRow(db: Database, existing: BackendRow, input: BackendInput): Statement {
  return db
    .update(backends)
    .set({
      ...(input.fullname != null && { fullname: input.fullname }),
      ...(input.port != null && { port: input.port }),
      ...(input.params != null && { params: input.params }),
      version: sql`${backends.version} + 1`,
    })
    .where(eq(backends.id, existing.id));
}

/**
 * Statements turning the backend's domains into `wanted` when given: those of the same name updated in place, the
 * others deleted or inserted. Returns the inserts too: the names the backend newly claims.
 */
function domainStatements(backendId: SQL, current: DomainRow[], wanted: DomainFields[] | undefined) {
  if (!wanted) return { statements: [], inserts: [] };
  const currentByName = new Map(current.map((row) => [row.domainName, row]));
  const wantedNames = new Set(wanted.map((domain) => domain.domainName));
  const readDomain = (row: DomainRow) => ({ id: row.id, readBackendId: row.backendId });
  const removals = current.filter((row) => !wantedNames.has(row.domainName)).map(readDomain);
  const updates = wanted
    .filter((domain) => currentByName.has(domain.domainName))
    .map((domain) => {
      const row = currentByName.get(domain.domainName)!;
      return { ...domain, ...readDomain(row), readPublicCa: row.publicCaCertificate };
    });
  const inserts = wanted.filter((domain) => !currentByName.has(domain.domainName));
  const statements: Statement[] = [];
  if (removals.length) statements.push(...deleteDomains(removals));
  if (updates.length) statements.push(...updateDomains(updates));
  if (inserts.length) statements.push(insertDomains(inserts, backendId));
  return { statements, inserts };
}
/**
 * Makes `backend` use the containers (with their params) of `target`, for blue/green switches; checked by HAProxy
 * like a write of those containers when `checkParams` is given. Answers the write's warnings.
 */
export async function setContainersOf(
  db: Database,
  switched: { project: ProjectRow; backend: BackendRow; target: BackendRow },
  options: BackendOptions,
  control: WriteControl = {},
): Promise<{ etag: string; warnings: string[] }> {
  const { project, backend, target } = switched;
  const [targetReferences, currentReferences] = await db.batch([
    db.select().from(backendContainers).where(eq(backendContainers.backendId, target.id)),
    db.select().from(backendContainers).where(eq(backendContainers.backendId, backend.id)),
  ]);
  if (targetReferences.length === 0) {
    throw new CannotProcess(`Target backend with label ${target.label} does not contain any container references`);
  }
  // Rows stored before params were vetted are not copied onward: like a target without containers, the switch
  // cannot be processed until the target is fixed. They are vetted with what the backend's default-server sets.
  const own = vetBackendParams(backend.params, options.extraDirectives);
  for (const row of targetReferences) {
    const vetted = vetServerParams(row.params, own.ok ? own.value : undefined);
    if (!vetted.ok) {
      throw new CannotProcess(
        describeProblem(
          `Target backend with label ${target.label}: params of container ${row.containerId}`,
          vetted.error,
        ),
      );
    }
  }
  const wanted = targetReferences.map((row) => ({ containerId: row.containerId, params: row.params }));
  const warnings = options.checkParams
    ? await checkSwitchedServers(db, { ...switched, stored: currentReferences, links: wanted }, options.checkParams)
    : [];
  const summary = {
    backendLabel: backend.label,
    backendId: backend.id,
    targetBackendLabel: target.label,
    targetBackendId: target.id,
    containers: listChange(
      currentReferences.map((row) => row.containerId),
      wanted.map((reference) => reference.containerId),
    ),
  };
  const linked = new Set(currentReferences.map((row) => row.containerId));
  const measures: Measure[] = wanted.some((reference) => !linked.has(reference.containerId)) ? ["servers"] : [];
  if (sumParams(wanted) > sumParams(currentReferences)) measures.push("paramsBytes");
  const { etags } = await commitWrite(db, control, {
    projects: [project],
    statements: replaceReferences(sql`${backend.id}`, currentReferences, wanted),
    guards: quotaGuards(control.limits, [{ project, measures }]),
    changes: [{ projectLabel: project.label, summary }],
  });
  return { etag: etags.get(project.id)!, warnings };
}
