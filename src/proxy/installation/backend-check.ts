// A backend write whose params differ from what is stored is checked by the real HAProxy before it is stored (where
// an agent is configured): what that check is given, when it is needed, and what it answers. The check itself
// (the agent's `haproxy -c` on a minimal configuration) is haproxy/params-check.ts; the routes hand it in.
import { and, eq } from "drizzle-orm";
import type { Database } from "../../shared/db";
import { Invalid } from "../domain-errors";
import { inJsonList } from "./bulk";
import type { BackendInput } from "./inputs";
import type { BackendRow, ProjectRow } from "./rows";
import { backendContainers, containers, hosts } from "./tables";
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

/**
 * Has `check` judge the backend as the write would leave it, when its params or any server's params differ from what
 * is stored; throws 400 with HAProxy's reason when it refuses. Answers the write's warnings.
 */
export async function checkChangedParams(
  db: Database,
  write: { project: ProjectRow; input: BackendInput; existing: BackendRow | undefined },
  check: ParamsCheck,
): Promise<string[]> {
  const { project, input, existing } = write;
  if (input.params == null && input.backendContainers === undefined) return [];
  const stored = existing
    ? await db
        .select({ containerId: backendContainers.containerId, params: backendContainers.params })
        .from(backendContainers)
        .where(eq(backendContainers.backendId, existing.id))
    : [];
  const storedParams = new Map(stored.map((link) => [link.containerId, link.params]));
  const references = input.backendContainers ?? stored;
  const changed =
    (input.params != null && text(input.params) !== text(existing?.params)) ||
    (input.backendContainers ?? []).some((link) => text(link.params) !== text(storedParams.get(link.containerId)));
  if (!changed) return [];

  const ids = references.map((link) => link.containerId);
  const rows = ids.length
    ? await db
        .select({ id: containers.id, label: containers.label, ipv6: containers.ipv6, hostname: hosts.hostname })
        .from(containers)
        .innerJoin(hosts, eq(containers.hostId, hosts.id))
        .where(and(eq(containers.projectId, project.id), inJsonList(containers.id, ids)))
    : [];
  const byId = new Map(rows.map((row) => [row.id, row]));
  const servers = references.flatMap((link, index) => {
    const row = byId.get(link.containerId);
    if (!row) return [];
    const name = `${row.hostname}_${containerFqLabel(project.label, row.label)}`;
    return [{ field: `backendContainers[${index}].params`, name, address: row.ipv6, params: link.params ?? null }];
  });
  const draft = { port: input.port ?? existing?.port ?? 80, params: input.params ?? existing?.params ?? null, servers };
  const verdict = await check(draft);
  if (verdict.ok === "unchecked") return [`WARN: the params were not checked by HAProxy (${verdict.reason})`];
  if (!verdict.ok) throw new Invalid(`${verdict.field}: HAProxy refused it: ${verdict.message}`);
  return [];
}
