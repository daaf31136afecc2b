// Certificate selection (pure: it takes rows): the names certificates are stored and shipped under, their PEM as
// HAProxy loads it, what the API shows of them, and which certificate serves which domain.
import type { CertificateRow } from "./rows";
import { normalisePem } from "./x509";

export const FALLBACK_CERTIFICATE_NAME = "fallback";
/** Names of provided certificates: no `_`, so they never meet an ACME certificate's `acme_<domain>`. */
export const PROVIDED_NAME_PATTERN = /^[a-z0-9][a-z0-9.-]{0,99}$/;

export const acmeCertificateName = (domainName: string) => `acme_${domainName}`;

/** The file of a certificate in the bundle, relative to the configuration directory. */
export const certificateFile = (row: Pick<CertificateRow, "name" | "source">) =>
  row.source === "fallback" ? "fallback.pem" : `certs/${row.name}.pem`;

/** Certificate chain and key as HAProxy loads them: one PEM file, chain first. */
export const combinedPem = (row: Pick<CertificateRow, "certificatePem" | "privateKeyPem">) =>
  `${normalisePem(row.certificatePem, "CERTIFICATE")}${normalisePem(row.privateKeyPem, "PRIVATE KEY")}`;

/**
 * What the API shows of a certificate (never the key); a provided certificate's projects by label (`labelOf`: project
 * ids to labels; a deleted project's id is left out, ids are never reused).
 */
export const certificateSummary = (
  row: Omit<CertificateRow, "certificatePem" | "privateKeyPem">,
  labelOf: ReadonlyMap<number, string> = new Map(),
) => ({
  name: row.name,
  source: row.source,
  file: certificateFile(row),
  domainNames: row.domainNames,
  ...(row.projectIds && {
    projects: row.projectIds.flatMap((id) => labelOf.get(id) ?? []).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
  }),
  issuer: row.issuer,
  serialNumber: row.serialNumber,
  notBefore: row.notBefore.toISOString(),
  notAfter: row.notAfter.toISOString(),
});

export interface DomainCertificateNeeds {
  domainName: string;
  publicCaCertificate: boolean;
  certProvided: boolean;
}

/**
 * Which certificate serves each certificate name and each domain. For a name, a domain asking for a public CA
 * certificate prefers the ACME one and a domain with certProvided the provided one; otherwise the later end wins,
 * then the lower id. A domain takes the winner of its exact name, else of `*.<parent>`. A provided certificate with a
 * project list (projectIds) serves only the domains of those projects (`projectOf` names a domain's project), and
 * is in `used` only when it serves one; the others serve any domain. `used` lists the certificates that win at least
 * one name (the certificate job warns when one of them ends soon); the generator ships only those of `byDomain`, each
 * offered for exactly its domains (haproxy/crt-list.ts).
 */
export function selectCertificates<D extends DomainCertificateNeeds>(
  rows: CertificateRow[],
  domains: D[],
  projectOf: (domain: D) => number | undefined = () => undefined,
) {
  const needs = new Map(domains.map((domain) => [domain.domainName, domain]));
  const rank = (row: CertificateRow, name: string) => {
    const need = needs.get(name);
    if (need?.publicCaCertificate && row.source === "acme") return 1;
    if (need?.certProvided && row.source === "provided") return 1;
    return 0;
  };
  /** Positive when `a` serves `name` better than `b`. */
  const preference = (a: CertificateRow, b: CertificateRow, name: string) =>
    rank(a, name) - rank(b, name) || a.notAfter.getTime() - b.notAfter.getTime() || b.id - a.id;
  const winnerByName = new Map<string, CertificateRow>();
  const restrictedByName = new Map<string, CertificateRow[]>();
  for (const row of rows) {
    if (row.source === "fallback") continue;
    for (const name of row.domainNames) {
      if (row.projectIds) {
        restrictedByName.set(name, [...(restrictedByName.get(name) ?? []), row]);
        continue;
      }
      const current = winnerByName.get(name);
      if (!current || preference(row, current, name) > 0) winnerByName.set(name, row);
    }
  }
  /** The best certificate for `name` that may serve the domain: the open winner or one of the domain's project. */
  const bestFor = (name: string, domain: D) => {
    let best = winnerByName.get(name);
    const restricted = restrictedByName.get(name);
    if (!restricted) return best;
    const project = projectOf(domain);
    for (const row of restricted) {
      if (project === undefined || !row.projectIds!.includes(project)) continue;
      if (!best || preference(row, best, name) > 0) best = row;
    }
    return best;
  };
  const byDomain = new Map<string, CertificateRow>();
  for (const domain of domains) {
    const dot = domain.domainName.indexOf(".");
    const winner =
      bestFor(domain.domainName, domain) ??
      (dot > 0 ? bestFor(`*.${domain.domainName.slice(dot + 1)}`, domain) : undefined);
    if (winner) byDomain.set(domain.domainName, winner);
  }
  const serving = [...byDomain.values()].filter((row) => row.projectIds);
  const used = [...new Set([...winnerByName.values(), ...serving])].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  return { byDomain, used };
}
