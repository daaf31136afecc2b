// Rows to the spec's JSON resources, with the derived names the original computed (FQLabel, sshProxyUsername).
// Internal ids stay hidden except the spec's *Id fields; null fields are dropped later by canonical().
import type {
  BackendContainerRow,
  BackendRow,
  ContainerPermissionRow,
  ContainerRow,
  DomainRow,
  HostRow,
  UserRow,
} from "./rows";

/** Code unit order, as the original's Java sorting; used for every list and map the API returns. */
export const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Per-project backends whose domains are served by the shared global HAProxy backends. */
export const GLOBAL_BACKEND_LABELS: ReadonlySet<string> = new Set(["nocontent", "permredirect", "tempredirect"]);

export const backendFqLabel = (projectLabel: string, backendId: number, backendLabel: string) =>
  `${projectLabel}_${backendId}_${backendLabel}`;

export const containerFqLabel = (projectLabel: string, containerLabel: string) => `${projectLabel}-${containerLabel}`;

/** The Linux account on the SSH proxy for one permission: `<project>-<container>_<permission>`. */
export const sshProxyUsername = (projectLabel: string, containerLabel: string, permission: string) =>
  `${containerFqLabel(projectLabel, containerLabel)}_${permission}`;

export const domainView = (row: DomainRow, backendLabel: string) => ({
  domainName: row.domainName,
  backendLabel,
  publicCaCertificate: row.publicCaCertificate,
  certProvided: row.certProvided,
  redirectToUrl: row.redirectToUrl,
  version: row.version,
});

export const backendContainerView = (row: BackendContainerRow) => ({
  backendId: row.backendId,
  containerId: row.containerId,
  params: row.params,
  version: row.version,
});

export const backendView = (
  projectLabel: string,
  row: BackendRow,
  domainRows: DomainRow[],
  containerRows: BackendContainerRow[],
) => ({
  label: row.label,
  FQLabel: backendFqLabel(projectLabel, row.id, row.label),
  fullname: row.fullname,
  projectId: row.projectId,
  port: row.port,
  params: row.params,
  globalBackend: GLOBAL_BACKEND_LABELS.has(row.label),
  domainForwardings: domainRows.map((domain) => domainView(domain, row.label)),
  backendContainers: containerRows.map(backendContainerView),
  version: row.version,
});

export const hostView = (row: HostRow) => ({ hostname: row.hostname, ipv6: row.ipv6, version: row.version });

export const userView = (row: UserRow) => ({
  email: row.email,
  fullname: row.fullname,
  sshPublicKey: row.sshPublicKey,
  role: row.role,
  defaultPermission: row.defaultPermission,
  proxyPermission: row.proxyPermission,
  version: row.version,
});

export const containerView = (
  projectLabel: string,
  row: ContainerRow,
  host: HostRow,
  permissions: { permission: ContainerPermissionRow; user: UserRow }[],
) => ({
  label: row.label,
  FQLabel: containerFqLabel(projectLabel, row.label),
  fullname: row.fullname,
  projectId: row.projectId,
  hostId: row.hostId,
  host: hostView(host),
  ipv6: row.ipv6,
  containerPermissions: permissions.map(({ permission, user }) => ({
    permission: permission.permission,
    containerId: permission.containerId,
    userId: permission.userId,
    user: userView(user),
    sshProxyUsername: sshProxyUsername(projectLabel, row.label, permission.permission),
    version: permission.version,
  })),
  version: row.version,
});

export type ProjectView = ReturnType<typeof projectViewOf>;

/**
 * The tree as an API user reads it. A user granted a container carries the patterns of the projects it may manage
 * (proxyPermission), which name other tenants' projects: an API user, who gets the same 404 for a project it may not
 * see as for one that does not exist, must not learn them here. The administrator reads the whole tree.
 */
export const treeForApiUser = (tree: ProjectView) => ({
  ...tree,
  containers: tree.containers.map((container) => ({
    ...container,
    containerPermissions: container.containerPermissions.map(({ user, ...grant }) => {
      const { proxyPermission: _, ...visible } = user;
      return { ...grant, user: visible };
    }),
  })),
});

export const projectViewOf = (
  label: string,
  fullname: string | null,
  version: number,
  backendViews: ReturnType<typeof backendView>[],
  containerViews: ReturnType<typeof containerView>[],
) => ({ label, fullname, backends: backendViews, containers: containerViews, version });
