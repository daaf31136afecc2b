// Stored rows for the proxy's pure generators (HAProxy bundle, SSH proxy accounts): the fallback certificate and the
// one-project installation their tests hand in, built here instead of spelt out field by field in each test.
import type { ContainerRow } from "../../src/proxy/installation/rows";
import type { CertificateRow } from "../../src/proxy/pki/rows";
import type { generateSshAccounts } from "../../src/proxy/sshproxy/config";

/** The fallback certificate's row as the generator reads it; the PEMs are empty unless a test needs real ones. */
export const fallbackCertificateRow = (certificatePem = "", privateKeyPem = ""): CertificateRow => ({
  id: 1,
  name: "fallback",
  source: "fallback",
  domainNames: ["fallback.invalid"],
  issuer: "CN=test",
  serialNumber: "01",
  notBefore: new Date("2026-01-01T00:00:00Z"),
  notAfter: new Date("2036-01-01T00:00:00Z"),
  certificatePem,
  privateKeyPem,
  projectIds: null,
  updatedAt: new Date("2026-01-01T00:00:00Z"),
});

/** A container of project 1 on host 1, as stored before any update. */
export const containerRow = (id: number, label: string, ipv6: string): ContainerRow => ({
  id,
  projectId: 1,
  label,
  fullname: null,
  hostId: 1,
  ipv6,
  version: 0,
});

/**
 * What generateSshAccounts reads for project shop: the containers (label → address, ids from 1 in order) on host
 * h1.hosts.example at `hostIpv6`, and anna, with `sshPublicKey`, granted root on each of them.
 */
export function shopRootAccounts(
  hostIpv6: string,
  containers: Record<string, string>,
  sshPublicKey: string,
): Parameters<typeof generateSshAccounts>[0] {
  const v = { version: 0 };
  const ids = Object.keys(containers).map((_, index) => index + 1);
  return {
    projects: [{ id: 1, label: "shop", fullname: null, revision: 0, ...v }],
    containers: Object.entries(containers).map(([label, ipv6], index) => containerRow(ids[index], label, ipv6)),
    hosts: [{ id: 1, hostname: "h1.hosts.example", ipv6: hostIpv6, ...v }],
    permissions: ids.map((id) => ({ id, containerId: id, userId: 1, permission: "root", ...v })),
    users: [
      {
        id: 1,
        email: "anna@example.com",
        fullname: null,
        sshPublicKey,
        role: "USER",
        defaultPermission: [],
        proxyPermission: [],
        ...v,
      },
    ],
  };
}
