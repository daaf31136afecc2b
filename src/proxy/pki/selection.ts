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

/** What the API shows of a certificate (never the key). */
export const certificateSummary = (row: CertificateRow) => ({
  name: row.name,
  source: row.source,
  file: certificateFile(row),
  domainNames: row.domainNames,
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
 * then the lower id. A domain takes the winner of its exact name, else of `*.<parent>`. `used` lists the
 * certificates that win at least one name (only they are shipped: HAProxy would pick among duplicates itself).
 */
export function selectCertificates(rows: CertificateRow[], domains: DomainCertificateNeeds[]) {
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
  for (const row of rows) {
    if (row.source === "fallback") continue;
    for (const name of row.domainNames) {
      const current = winnerByName.get(name);
      if (!current || preference(row, current, name) > 0) winnerByName.set(name, row);
    }
  }
  const byDomain = new Map<string, CertificateRow>();
  for (const domain of domains) {
    const dot = domain.domainName.indexOf(".");
    const winner =
      winnerByName.get(domain.domainName) ??
      (dot > 0 ? winnerByName.get(`*.${domain.domainName.slice(dot + 1)}`) : undefined);
    if (winner) byDomain.set(domain.domainName, winner);
  }
  const used = [...new Set(winnerByName.values())].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { byDomain, used };
}
