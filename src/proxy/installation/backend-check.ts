// A backend write whose params or servers differ from what is stored is checked by the real HAProxy before it is stored (where
// an agent is configured): what that check is given, when it is needed, and what it answers. The check itself
// (the agent's `haproxy -c` on a minimal configuration) is haproxy/params-check.ts; the routes hand it in.
import { and, eq } from "drizzle-orm";
import type { Database } from "../../shared/db";
import { Invalid } from "../domain-errors";
import { inJsonList } from "./bulk";
import type { BackendInput } from "./inputs";
import type { BackendRow, ProjectRow } from "./rows";
import { containers, hosts } from "./tables";
import { containerFqLabel } from "./views";

/** The backend as the write would leave it, with its servers named and addressed as the generator writes them. */
export interface BackendDraft {
  port: number;
  params: string | null;
  servers: { field: string; name: string; address: string; params: string | null }[];
}

export type ParamsVerdict =
  | { ok: true }
  /** HAProxy refused: `field` names the input field (params, backendContainers[1].params), `message` HAProxy's reason. */
  | { ok: false; field: string; message: string }
  /** Nothing could check (the agent did not answer): the write goes ahead, on the vetting alone, with a warning. */
  | { ok: "unchecked"; reason: string };

export type ParamsCheck = (draft: BackendDraft) => Promise<ParamsVerdict>;

const text = (params: string | null | undefined) => (params ?? "").trim();

/** A container reference as stored or as a write would leave it. */
export interface ServerLink {
  containerId: number;
  params?: string | null;
}

/**
 * Whether a backend's servers change: a container added or removed, or a server's params changed. Adding a server
 * matters even without params of its own: the backend's `default-server` line applies to it, and a line HAProxy
 * accepts with no server (`ssl-min-ver` above `ssl-max-ver`, say) can fail every server it then reaches.
 */
function serversChange(stored: readonly ServerLink[], wanted: readonly ServerLink[]): boolean {
  const storedParams = new Map(stored.map((link) => [link.containerId, text(link.params)]));
  const wantedIds = new Set(wanted.map((link) => link.containerId));
  return (
    stored.some((link) => !wantedIds.has(link.containerId)) ||
    wanted.some((link) => storedParams.get(link.containerId) !== text(link.params))
  );
}

/**
 * Has `check` judge the backend as the write would leave it, when its params or its servers differ from what is
 * stored (`stored`: the container references the write read, none for a new backend); throws 400 with HAProxy's
 * reason when it refuses. Answers the write's warnings.
 */
export async function checkChangedParams(
  db: Database,
  write: { project: ProjectRow; input: BackendInput; existing: BackendRow | undefined; stored: readonly ServerLink[] },
  check: ParamsCheck,
): Promise<string[]> {
  const { project, input, existing, stored } = write;
  if (input.params == null && input.backendContainers === undefined) return [];
  const links = input.backendContainers ?? stored;
  const paramsChange = input.params != null && text(input.params) !== text(existing?.params);
  if (!paramsChange && !serversChange(stored, links)) return [];
  const params = input.params ?? existing?.params ?? null;
  const port = input.port ?? existing?.port ?? 80;
  return checkServers(db, { project, port, params, links, linksField: "backendContainers" }, check);
}

/**
 * Has `check` judge a backend that is switched to another one's containers (their params come along), when that
 * changes its servers; throws 400 with HAProxy's reason when it refuses. Answers the write's warnings.
 */
export async function checkSwitchedServers(
  db: Database,
  write: { project: ProjectRow; backend: BackendRow; target: BackendRow; stored: ServerLink[]; links: ServerLink[] },
  check: ParamsCheck,
): Promise<string[]> {
  const { project, backend, target, stored, links } = write;
  if (!serversChange(stored, links)) return [];
  const linksField = `containers of ${target.label}`;
  return checkServers(db, { project, port: backend.port, params: backend.params, links, linksField }, check);
}

/**
 * The check of a backend's params with its servers named and addressed as the generator writes them. Nothing is
 * asked where no tenant text would reach the section: a server line without params is the generator's own.
 */
async function checkServers(
  db: Database,
  backend: {
    project: ProjectRow;
    port: number;
    params: string | null;
    links: readonly ServerLink[];
    linksField: string;
  },
  check: ParamsCheck,
): Promise<string[]> {
  const { project, port, params, links, linksField } = backend;
  if (text(params) === "" && links.every((link) => text(link.params) === "")) return [];
  const ids = links.map((link) => link.containerId);
  const rows = ids.length
    ? await db
        .select({ id: containers.id, label: containers.label, ipv6: containers.ipv6, hostname: hosts.hostname })
        .from(containers)
        .innerJoin(hosts, eq(containers.hostId, hosts.id))
        .where(and(eq(containers.projectId, project.id), inJsonList(containers.id, ids)))
    : [];
  const byId = new Map(rows.map((row) => [row.id, row]));
  const servers = links.flatMap((link, index) => {
    const row = byId.get(link.containerId);
    if (!row) return [];
    const name = `${row.hostname}_${containerFqLabel(project.label, row.label)}`;
    return [{ field: `${linksField}[${index}].params`, name, address: row.ipv6, params: link.params ?? null }];
  });
  const verdict = await check({ port, params, servers });
  if (verdict.ok === "unchecked") return [`WARN: the params were not checked by HAProxy (${verdict.reason})`];
  if (!verdict.ok) throw new Invalid(`${verdict.field}: HAProxy refused it: ${verdict.message}`);
  return [];
}
