// Zones (administration): DNS names the administrator assigns to a project, which alone may then hold the names equal
// to or under them (ownership.ts applies that to every domain write). Assigning a zone that already holds another
// project's domains is refused, naming them: the administrator moves or deletes those first, so that no domain ever
// sits in a zone that is not its project's.
import { asc, eq, sql } from "drizzle-orm";
import type { Database } from "../../shared/db";
import { Conflict, NotFound } from "../domain-errors";
import { rangeUnder, reversedName } from "./domain-names";
import type { Guard } from "./guards";
import { projects, zones } from "./tables";
import { commitWrite, DELETED_A_ROW, type WriteControl } from "./writes";

/** At most this many domains are named when an assignment is refused. */
const NAMED_DOMAINS = 20;

export interface ZoneView {
  name: string;
  projectLabel: string;
  version: number;
}

export async function listZones(db: Database): Promise<ZoneView[]> {
  return db
    .select({ name: zones.name, projectLabel: projects.label, version: zones.version })
    .from(zones)
    .innerJoin(projects, eq(zones.projectId, projects.id))
    .orderBy(asc(zones.name));
}

/**
 * Refuses the assignment while the zone holds domains of another project than `projectId`, but for those inside a
 * deeper zone (which decides for them): checked in the write's batch, so a domain created meanwhile counts too.
 */
function noForeignDomains(name: string, projectId: number): Guard {
  const { from, to } = rangeUnder(reversedName(name));
  return {
    refusal: sql`(
      select json_group_array(domain_name) from (
        select d.domain_name from domains d join backends b on b.id = d.backend_id
        where (d.domain_name = ${name} or (d.reversed_name > ${from} and d.reversed_name < ${to}))
          and b.project_id <> ${projectId}
          and not exists (
            select 1 from zones z2 where z2.reversed_name > ${from} and z2.reversed_name < ${to}
              and (d.reversed_name = z2.reversed_name
                or (d.reversed_name > z2.reversed_name || '.' and d.reversed_name < z2.reversed_name || '/'))
          )
        order by d.domain_name limit ${NAMED_DOMAINS + 1}
      ) having count(*) > 0
    )`,
    answer: (detail) => {
      const names = JSON.parse(detail) as string[];
      const listed = names.slice(0, NAMED_DOMAINS).join(", ") + (names.length > NAMED_DOMAINS ? " and more" : "");
      return new Conflict(
        `Invalid zone: ${name} holds domains of other projects (${listed}); move or delete them first, nothing was changed`,
      );
    },
  };
}

/** Assigns the zone to the project (creating it, or moving it from another project). */
export async function assignZone(
  db: Database,
  input: { name: string; projectLabel: string },
  control: WriteControl = {},
): Promise<ZoneView> {
  const [[project], [existing]] = await db.batch([
    db.select().from(projects).where(eq(projects.label, input.projectLabel)).limit(1),
    db.select().from(zones).where(eq(zones.name, input.name)).limit(1),
  ]);
  if (!project) throw new NotFound(`Invalid project: label ${input.projectLabel} not existing`);
  const summary = {
    action: existing ? "update" : "create",
    zone: input.name,
    projectId: project.id,
    ...(existing && existing.projectId !== project.id && { previousProjectId: existing.projectId }),
  };
  const { rows } = await commitWrite(db, control, {
    what: "Unable to process zone update",
    projects: [],
    statements: [
      db
        .insert(zones)
        .values({ name: input.name, reversedName: reversedName(input.name), projectId: project.id })
        .onConflictDoUpdate({
          target: zones.name,
          set: { projectId: project.id, version: sql`${zones.version} + 1` },
        })
        .returning({ version: zones.version }),
    ],
    guards: [noForeignDomains(input.name, project.id)],
    changes: [{ projectLabel: project.label, summary }],
  });
  const version = rows ? (rows[0][0].version as number) : existing ? existing.version + 1 : 0;
  return { name: input.name, projectLabel: project.label, version };
}

export async function removeZone(db: Database, name: string, control: WriteControl = {}): Promise<void> {
  const missing = () => new NotFound(`Invalid zone: ${name} not existing`);
  const [existing] = await db
    .select({ id: zones.id, projectId: zones.projectId, projectLabel: projects.label })
    .from(zones)
    .innerJoin(projects, eq(zones.projectId, projects.id))
    .where(eq(zones.name, name))
    .limit(1);
  if (!existing) throw missing();
  const { rows } = await commitWrite(db, control, {
    what: "Unable to process zone delete",
    projects: [],
    statements: [db.delete(zones).where(eq(zones.id, existing.id)).returning({ id: zones.id })],
    changes: [
      {
        projectLabel: existing.projectLabel,
        summary: { action: "delete", zone: name, projectId: existing.projectId },
        onlyIf: DELETED_A_ROW,
      },
    ],
  });
  if (rows && rows[0].length === 0) throw missing();
}
