// Domains: the per-project and per-backend maps, and the mass update (validated fully, then one D1 batch).
import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../shared/db";
import { mayAccessProject, type Caller } from "./api-users";
import {
  deleteDomains,
  inJsonList,
  insertDomains,
  updateDomains,
  type DomainFields,
  type ReadDomain,
  type Statement,
} from "./bulk";
import { CannotProcess, invalidBackend, invalidProject } from "../domain-errors";
import { ownershipGuard, type NameClaim } from "./ownership";
import type { Guard } from "./guards";
import { quotaGuards, type Measure } from "./quotas";
import { invalidRedirect, isValidRedirectUrl } from "./redirects";
import type { ProjectRow } from "./rows";
import type { DomainOperation, MassDomainUpdate } from "./inputs";
import { backends, domains, projects } from "./tables";
import { byText, domainView } from "./views";
import { commitWrite, listed, type ProjectRef, type WriteControl } from "./writes";

/**
 * Which of the names a provided (not public CA) certificate covers now and may serve to the project that asks: there
 * enableSSL sets certProvided instead of publicCaCertificate. The certificate inventory (pki/certificates.ts)
 * implements it; the routes pass it in.
 */
export type ProvidedCertificateLookup = (
  db: Database,
  requests: readonly { domainName: string; projectId: number }[],
) => Promise<ReadonlySet<string>>;

/** The domains of a project (or of one of its backends) keyed by domain name, sorted by name. */
export async function listDomains(db: Database, project: ProjectRow, backendId?: number) {
  const rows = await db
    .select({ domain: domains, backendLabel: backends.label })
    .from(domains)
    .innerJoin(backends, eq(domains.backendId, backends.id))
    .where(backendId === undefined ? eq(backends.projectId, project.id) : eq(backends.id, backendId));
  rows.sort((a, b) => byText(a.domain.domainName, b.domain.domainName));
  const map: Record<string, ReturnType<typeof domainView>> = {};
  for (const row of rows) map[row.domain.domainName] = domainView(row.domain, row.backendLabel);
  return map;
}

const FULL_SYNC_SINGLE_PROJECT =
  "Full synchronizations need to refer to a single existing project, containing all active domains in the project.";

interface ResolvedOperation {
  operation: DomainOperation;
  project: ProjectRow;
  backendId: number;
}

/**
 * Applies the operations of one mass update and returns its warnings, and the new ETag of the project when it changed
 * only one. Everything is checked before anything is written; the writes then go in one D1 batch, so a refused request
 * changes nothing. Each project it changes has its revision bumped and checked against If-Match.
 */
export async function massUpdateDomains(
  db: Database,
  caller: Caller,
  input: MassDomainUpdate,
  providedCertificates: ProvidedCertificateLookup,
  control: WriteControl = {},
): Promise<{ warnings: string[]; etag: string | undefined }> {
  const fullSync = input.fullSync === true;
  const projectLabels = checkOperations(caller, input.domainOperations, fullSync);
  const state = await readState(db, input.domainOperations, projectLabels, fullSync);
  const resolved = resolveOperations(caller, input.domainOperations, state);
  const sslRequests = resolved
    .filter(({ operation }) => operation.operation !== "DELETE" && operation.enableSSL)
    .map(({ operation, project }) => ({ domainName: operation.domainName, projectId: project.id }));
  const provided = sslRequests.length ? await providedCertificates(db, sslRequests) : new Set<string>();
  const { statements, gains, changes } = planWrites(input.domainOperations, resolved, state, provided);
  const touchedProjects = touchedProjectsOf(resolved, state, changes);
  const { etags } = await commitWrite(db, control, {
    projects: touchedProjects,
    statements,
    guards: gains.guards(control),
    // An empty request changes no project, and is recorded once all the same.
    changes: touchedProjects.length
      ? touchedProjects.map((project) => ({
          projectLabel: project.label,
          summary: { fullSync, ...changes.of(project.label) },
        }))
      : [{ projectLabel: null, summary: { fullSync, operations: 0 } }],
  });
  const etag = touchedProjects.length === 1 ? etags.get(touchedProjects[0].id) : undefined;
  return { warnings: [], etag };
}

/** The checks that need no database: one operation per name, a full sync's shape, access; returns the projects named. */
function checkOperations(caller: Caller, operations: readonly DomainOperation[], fullSync: boolean): string[] {
  const seen = new Set<string>();
  for (const { domainName } of operations) {
    if (seen.has(domainName)) throw new CannotProcess(`${domainName}: disallowed duplicate update operation`);
    seen.add(domainName);
  }
  const projectLabels = [...new Set(operations.map((operation) => operation.projectLabel))];
  if (fullSync) {
    const deletion = operations.find((operation) => operation.operation === "DELETE");
    if (deletion) {
      throw new CannotProcess(
        `${deletion.domainName}: full synchronizations allow 'create' and 'update' records only.`,
      );
    }
    if (projectLabels.length !== 1) throw new CannotProcess(FULL_SYNC_SINGLE_PROJECT);
  }
  for (const label of projectLabels) if (!mayAccessProject(caller, label)) throw invalidProject(label);
  return projectLabels;
}

type State = Awaited<ReturnType<typeof readState>>;

/** Everything the update decides on, in one round trip. */
async function readState(
  db: Database,
  operations: readonly DomainOperation[],
  projectLabels: string[],
  fullSync: boolean,
) {
  const names = operations.map((operation) => operation.domainName);
  const [projectRows, backendRows, existingRows, othersOfProject] = await db.batch([
    db.select().from(projects).where(inJsonList(projects.label, projectLabels)),
    db
      .select({ id: backends.id, label: backends.label, projectId: backends.projectId })
      .from(backends)
      .innerJoin(projects, eq(backends.projectId, projects.id))
      .where(inJsonList(projects.label, projectLabels)),
    // With its project, which a domain moved out of changes too. No two columns may share a name here (so the
    // project's id is read off the backend): D1's batch answers rows keyed by column name.
    db
      .select({
        id: domains.id,
        domainName: domains.domainName,
        backendId: domains.backendId,
        publicCaCertificate: domains.publicCaCertificate,
        projectId: backends.projectId,
        projectLabel: projects.label,
        projectRevision: projects.revision,
      })
      .from(domains)
      .innerJoin(backends, eq(domains.backendId, backends.id))
      .innerJoin(projects, eq(backends.projectId, projects.id))
      .where(inJsonList(domains.domainName, names)),
    // A full synchronization removes the project's domains it does not name: these, by id, so that the audit entry
    // lists exactly what is deleted.
    db
      .select({ id: domains.id, domainName: domains.domainName, backendId: domains.backendId })
      .from(domains)
      .innerJoin(backends, eq(domains.backendId, backends.id))
      .innerJoin(projects, eq(backends.projectId, projects.id))
      .where(
        fullSync
          ? and(
              eq(projects.label, projectLabels[0]),
              sql`${domains.domainName} not in (select value from json_each(${JSON.stringify(names)}))`,
            )
          : sql`0`,
      ),
  ]);
  const existingByName = new Map(existingRows.map((row) => [row.domainName, row]));
  return { projectRows, backendRows, existingRows, existingByName, othersOfProject };
}

/** Each operation with its project and backend, checked against what is stored. */
function resolveOperations(caller: Caller, operations: readonly DomainOperation[], state: State): ResolvedOperation[] {
  const projectByLabel = new Map(state.projectRows.map((row) => [row.label, row]));
  const backendIdByKey = new Map(state.backendRows.map((row) => [`${row.projectId}/${row.label}`, row.id]));
  return operations.map((operation) => {
    const project = projectByLabel.get(operation.projectLabel);
    if (!project) throw invalidProject(operation.projectLabel);
    const backendId = backendIdByKey.get(`${project.id}/${operation.backendLabel}`);
    if (backendId === undefined) throw invalidBackend(operation.backendLabel);
    if (operation.operation !== "DELETE") {
      const existing = state.existingByName.get(operation.domainName);
      // A domain of a project the caller cannot see is never moved (the original allowed that takeover).
      if (existing && !mayAccessProject(caller, existing.projectLabel)) {
        throw new CannotProcess(`${operation.domainName}: assigned to a project not existing or access denied`);
      }
      const url = operation.redirectToUrl;
      if (url != null && !isValidRedirectUrl(url)) throw new CannotProcess(invalidRedirect(operation.domainName, url));
    }
    return { operation, project, backendId };
  });
}

/** The statements of the update, with what it gives each project and the audit summary of its changes. */
function planWrites(
  operations: readonly DomainOperation[],
  resolved: ResolvedOperation[],
  state: State,
  provided: ReadonlySet<string>,
) {
  const inserts: (DomainFields & { backendId: number })[] = [];
  const updates: (DomainFields & ReadDomain & { backendId: number })[] = [];
  const deletions: ReadDomain[] = [];
  const gains = new Gains();
  const changes = new ChangeSummaries(operations);
  for (const { operation, project, backendId } of resolved) {
    const existing = state.existingByName.get(operation.domainName);
    if (operation.operation === "DELETE") {
      // Only a domain of the named backend is deleted; anything else is left alone, as in the original.
      if (existing && existing.backendId === backendId) {
        deletions.push({ id: existing.id, readBackendId: existing.backendId });
        changes.add(project.label, "deleted", operation.domainName);
      }
      continue;
    }
    const fields = domainFieldsOf(operation, provided);
    gains.add(project, fields, existing);
    if (existing) {
      const read = { id: existing.id, readBackendId: existing.backendId, readPublicCa: existing.publicCaCertificate };
      updates.push({ ...fields, ...read, backendId });
      if (existing.projectLabel === project.label) changes.add(project.label, "updated", operation.domainName);
      else {
        changes.add(project.label, "movedIn", operation.domainName);
        changes.add(existing.projectLabel, "movedOut", operation.domainName);
      }
    } else {
      inserts.push({ ...fields, backendId });
      changes.add(project.label, "created", operation.domainName);
    }
  }
  const statements: Statement[] = [];
  if (deletions.length) statements.push(...deleteDomains(deletions));
  if (updates.length) statements.push(...updateDomains(updates));
  if (inserts.length) statements.push(insertDomains(inserts));
  const { othersOfProject } = state;
  if (othersOfProject.length) {
    const label = resolved[0].project.label;
    for (const other of [...othersOfProject].sort((a, b) => byText(a.domainName, b.domainName)))
      changes.add(label, "removedByFullSync", other.domainName);
    statements.push(
      ...deleteDomains(othersOfProject.map((other) => ({ id: other.id, readBackendId: other.backendId }))),
    );
  }
  return { statements, gains, changes };
}

/** The stored fields of a create or update: enableSSL asks for a provided certificate where one covers the name. */
function domainFieldsOf(operation: DomainOperation, provided: ReadonlySet<string>): DomainFields {
  const ssl = operation.enableSSL === true;
  return {
    domainName: operation.domainName,
    publicCaCertificate: ssl && !provided.has(operation.domainName),
    certProvided: ssl && provided.has(operation.domainName),
    redirectToUrl: operation.redirectToUrl ?? null,
  };
}

/** Every project named by an operation, and every project a domain moves out of, changes; sorted by label. */
function touchedProjectsOf(resolved: ResolvedOperation[], state: State, changes: ChangeSummaries): ProjectRef[] {
  const touched = new Map<string, ProjectRef>(resolved.map(({ project }) => [project.label, project]));
  const changed = new Set(changes.labels());
  for (const { projectId: id, projectLabel: label, projectRevision: revision } of state.existingRows) {
    if (changed.has(label) && !touched.has(label)) touched.set(label, { id, label, revision });
  }
  return [...touched.values()].sort((a, b) => byText(a.label, b.label));
}

/** What a mass update gives each project: the names it claims (ownership.ts), and the quotas that concern (quotas.ts). */
class Gains {
  private readonly claims: NameClaim[] = [];
  private readonly growth = new Map<number, { project: ProjectRow; measures: Set<Measure> }>();

  /** A create or update of a domain for `project`; `existing` is the domain as stored, with its project. */
  add(project: ProjectRow, fields: DomainFields, existing?: { projectLabel: string; publicCaCertificate: boolean }) {
    const entry = this.growth.get(project.id) ?? { project, measures: new Set<Measure>() };
    this.growth.set(project.id, entry);
    const stays = existing?.projectLabel === project.label;
    if (!stays) {
      entry.measures.add("domains");
      this.claims.push({ domainName: fields.domainName, projectId: project.id });
    }
    if (fields.publicCaCertificate && !(stays && existing?.publicCaCertificate)) entry.measures.add("publicCaDomains");
  }

  guards(control: WriteControl): Guard[] {
    const ownership = ownershipGuard(this.claims, control.byAdministrator);
    const growth = [...this.growth.values()].map(({ project, measures }) => ({ project, measures: [...measures] }));
    return [...(ownership ? [ownership] : []), ...quotaGuards(control.limits, growth)];
  }
}

type DomainChange = "created" | "updated" | "deleted" | "movedIn" | "movedOut" | "removedByFullSync";

/** The audit summary of a mass update, per project: how many operations named it, and the names by kind of change. */
class ChangeSummaries {
  private readonly byProject = new Map<string, Partial<Record<DomainChange, string[]>>>();
  private readonly operationCount = new Map<string, number>();

  constructor(operations: readonly DomainOperation[]) {
    for (const { projectLabel } of operations)
      this.operationCount.set(projectLabel, (this.operationCount.get(projectLabel) ?? 0) + 1);
  }

  add(projectLabel: string, change: DomainChange, domainName: string): void {
    const changes = this.byProject.get(projectLabel) ?? {};
    (changes[change] ??= []).push(domainName);
    this.byProject.set(projectLabel, changes);
  }

  labels(): string[] {
    return [...this.byProject.keys()];
  }

  of(projectLabel: string) {
    const changes = Object.entries(this.byProject.get(projectLabel) ?? {}).map(([change, names]) => [
      change,
      listed(names),
    ]);
    return { operations: this.operationCount.get(projectLabel) ?? 0, ...Object.fromEntries(changes) };
  }
}
