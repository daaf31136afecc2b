// The whole installation as plain rows, read in one D1 round trip: what the HAProxy and SSH proxy generators work
// from. Sorted here once, so that the generators' output depends on the data alone.
import type { Database } from "../../shared/db";
import type { Installation, SshInstallation } from "./rows";
import {
  backendContainers,
  backends,
  containerPermissions,
  containers,
  domains,
  hosts,
  projects,
  users,
} from "./tables";
import { byText } from "./views";

export async function loadInstallation(db: Database): Promise<Installation> {
  const [projectRows, backendRows, domainRows, referenceRows, containerRows, hostRows] = await db.batch([
    db.select().from(projects),
    db.select().from(backends),
    db.select().from(domains),
    db.select().from(backendContainers),
    db.select().from(containers),
    db.select().from(hosts),
  ]);
  projectRows.sort((a, b) => byText(a.label, b.label));
  const projectLabel = new Map(projectRows.map((row) => [row.id, row.label]));
  backendRows.sort(
    (a, b) => byText(projectLabel.get(a.projectId)!, projectLabel.get(b.projectId)!) || byText(a.label, b.label),
  );
  domainRows.sort((a, b) => byText(a.domainName, b.domainName));
  referenceRows.sort((a, b) => a.backendId - b.backendId || a.containerId - b.containerId);
  return {
    projects: projectRows,
    backends: backendRows,
    domains: domainRows,
    backendContainers: referenceRows,
    containers: containerRows,
    hosts: hostRows,
  };
}

export async function loadSshInstallation(db: Database): Promise<SshInstallation> {
  const [projectRows, containerRows, hostRows, permissionRows, userRows] = await db.batch([
    db.select().from(projects),
    db.select().from(containers),
    db.select().from(hosts),
    db.select().from(containerPermissions),
    db.select().from(users),
  ]);
  return {
    projects: projectRows,
    containers: containerRows,
    hosts: hostRows,
    permissions: permissionRows,
    users: userRows,
  };
}
