// The installation's rows as plain interfaces, and the whole installation the generators work from. Spelled out here
// (tables.ts checks at compile time that they equal its drizzle rows) so that the pure generators never load drizzle.

export interface ProjectRow {
  id: number;
  label: string;
  fullname: string | null;
  version: number;
  /** Bumped by every write to anything of the project: its ETag. */
  revision: number;
}

export interface HostRow {
  id: number;
  hostname: string;
  ipv6: string;
  version: number;
}

export interface UserRow {
  id: number;
  email: string;
  fullname: string | null;
  sshPublicKey: string | null;
  role: "ADMIN" | "USER" | "CONTACT";
  defaultPermission: string[];
  proxyPermission: string[];
  version: number;
}

export interface ContainerRow {
  id: number;
  projectId: number;
  label: string;
  fullname: string | null;
  hostId: number;
  ipv6: string;
  version: number;
}

export interface ContainerPermissionRow {
  id: number;
  containerId: number;
  userId: number;
  permission: string;
  version: number;
}

export interface BackendRow {
  id: number;
  projectId: number;
  label: string;
  fullname: string | null;
  port: number;
  params: string | null;
  version: number;
}

export interface BackendContainerRow {
  id: number;
  backendId: number;
  containerId: number;
  params: string | null;
  version: number;
}

export interface DomainRow {
  id: number;
  domainName: string;
  backendId: number;
  publicCaCertificate: boolean;
  certProvided: boolean;
  redirectToUrl: string | null;
  version: number;
}

/** What the HAProxy generator reads (installation/load.ts loads it). */
export interface Installation {
  /** Sorted by label. */
  projects: ProjectRow[];
  /** Sorted by project label, then label. */
  backends: BackendRow[];
  /** Sorted by domain name. */
  domains: DomainRow[];
  /** Sorted by backend id, then container id. */
  backendContainers: BackendContainerRow[];
  containers: ContainerRow[];
  hosts: HostRow[];
}

/** What the SSH proxy generator reads. */
export interface SshInstallation {
  projects: ProjectRow[];
  containers: ContainerRow[];
  /** No account may log in to a host's address. */
  hosts: HostRow[];
  permissions: ContainerPermissionRow[];
  users: UserRow[];
}

/** True only when A and B are the same type (not merely assignable): how tables.ts pins these shapes to its schema. */
export type SameType<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Compiles only when every check is true. */
export type AllTrue<T extends true[]> = T;
