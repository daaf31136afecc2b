// The certificate inventory in D1 (the repository): ACME certificates (named acme_<domain>), certificates the
// administrator provides, and the self-signed fallback; and which domains a provided certificate covers (enableSSL
// then sets certProvided instead of publicCaCertificate). Which certificate serves which domain is ./selection.ts.
import { and, asc, eq, getTableColumns, gt } from "drizzle-orm";
import { inJsonList, type Database } from "../../shared/db";
import { Invalid, NotFound } from "../domain-errors";
import type { ProvidedCertificateLookup } from "../installation/domains";
import { projects } from "../installation/tables";
import { commitWrite, DELETED_A_ROW, listed, tableRow, type WriteControl } from "../installation/writes";
import { AcmeError } from "./acme-client";
import { DerError } from "./der";
import type { CertificateRow } from "./rows";
import { acmeCertificateName, FALLBACK_CERTIFICATE_NAME } from "./selection";
import { certificates } from "./tables";
import {
  type CertificateInfo,
  keyMismatch,
  nameCovers,
  normalisePem,
  readCertificateChain,
  readCertificatePem,
  selfSignedCertificate,
} from "./x509";

export async function listCertificates(db: Database): Promise<CertificateRow[]> {
  return db.select().from(certificates).orderBy(asc(certificates.name));
}

/** What GET /admin/certificates shows of each certificate: never its PEMs (a private key, and 3 KB a certificate). */
export async function listCertificateSummaries(db: Database): Promise<CertificateSummaryRow[]> {
  const { certificatePem: _certificate, privateKeyPem: _key, ...columns } = getTableColumns(certificates);
  return db.select(columns).from(certificates).orderBy(asc(certificates.name));
}

export type CertificateSummaryRow = Omit<CertificateRow, "certificatePem" | "privateKeyPem">;

export async function findCertificate(db: Database, name: string): Promise<CertificateRow | undefined> {
  const [row] = await db.select().from(certificates).where(eq(certificates.name, name)).limit(1);
  return row;
}

/** The names a provided certificate valid now covers (exactly or by wildcard) and may serve to the name's project. */
export const domainsWithProvidedCertificate: ProvidedCertificateLookup = async (db, requests) => {
  const rows = await db
    .select({ domainNames: certificates.domainNames, projectIds: certificates.projectIds })
    .from(certificates)
    .where(and(eq(certificates.source, "provided"), gt(certificates.notAfter, new Date())));
  const covered = ({ domainName, projectId }: (typeof requests)[number]) =>
    rows.some(
      (row) =>
        (!row.projectIds || row.projectIds.includes(projectId)) &&
        row.domainNames.some((pattern) => nameCovers(pattern, domainName)),
    );
  return new Set(requests.filter(covered).map((request) => request.domainName));
};

/** Project ids by label; 400 naming the first label no project has. */
async function projectIdsOf(db: Database, labels: readonly string[]): Promise<number[]> {
  const rows = await db
    .select({ id: projects.id, label: projects.label })
    .from(projects)
    .where(inJsonList(projects.label, labels));
  const idOf = new Map(rows.map((row) => [row.label, row.id]));
  const unknown = labels.find((label) => !idOf.has(label));
  if (unknown !== undefined) throw new Invalid(`projects: no project has the label ${unknown}`);
  return [...new Set(labels.map((label) => idOf.get(label)!))].sort((a, b) => a - b);
}

/** Every project's label by id, for certificateSummary. */
export async function projectLabels(db: Database): Promise<Map<number, string>> {
  const rows = await db.select({ id: projects.id, label: projects.label }).from(projects);
  return new Map(rows.map((row) => [row.id, row.label]));
}

/**
 * Stores an administrator's certificate (chain and PKCS#8 key) under a name, replacing the one of that name. The
 * chain must parse, the key must match it, and it must not have ended. With `projects` (labels) it serves only their
 * domains; without, every project's, as before.
 */
export async function putProvidedCertificate(
  db: Database,
  input: { name: string; certificatePem: string; privateKeyPem: string; now: Date; projects?: string[] | null },
  control: WriteControl = {},
): Promise<CertificateRow> {
  // The fallback's row is found by its name: a provided certificate of that name would replace it.
  if (input.name === FALLBACK_CERTIFICATE_NAME)
    throw new Invalid(`name: ${FALLBACK_CERTIFICATE_NAME} is reserved for the self-signed fallback certificate`);
  let info;
  try {
    info = readCertificatePem(input.certificatePem);
  } catch (error) {
    throw new Invalid(
      `certificatePem: not a PEM X.509 certificate (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const mismatch = await keyMismatch(input.privateKeyPem, info);
  if (mismatch) throw new Invalid(`privateKeyPem: ${mismatch}`);
  if (info.notAfter <= input.now)
    throw new Invalid(`certificatePem: the certificate ended on ${info.notAfter.toISOString()}`);
  const projectIds = input.projects == null ? null : await projectIdsOf(db, input.projects);
  // Written with its audit entry (the certificate's name and details, never its key) in one batch, or a dry run.
  const values = certificateValues({ ...input, source: "provided", info, projectIds });
  const summary = {
    name: input.name,
    domainNames: listed(info.domainNames),
    ...(projectIds && { projectIds: listed(projectIds) }),
    serialNumber: info.serialNumber,
    notAfter: info.notAfter.toISOString(),
  };
  const { rows } = await commitWrite(db, control, {
    what: "Unable to process certificate upload",
    projects: [],
    statements: [
      db.insert(certificates).values(values).onConflictDoUpdate({ target: certificates.name, set: values }).returning(),
    ],
    changes: [{ projectLabel: null, summary }],
  });
  return rows ? tableRow(certificates, rows[0][0]) : { id: 0, ...values };
}

export async function deleteProvidedCertificate(db: Database, name: string, control: WriteControl = {}): Promise<void> {
  const provided = and(eq(certificates.name, name), eq(certificates.source, "provided"));
  const missing = () => new NotFound(`Invalid certificate: name ${name} not existing`);
  const [existing] = await db.select({ id: certificates.id }).from(certificates).where(provided).limit(1);
  if (!existing) throw missing();
  const { rows } = await commitWrite(db, control, {
    what: "Unable to process certificate delete",
    projects: [],
    statements: [db.delete(certificates).where(provided).returning({ id: certificates.id })],
    changes: [{ projectLabel: null, summary: { name }, onlyIf: DELETED_A_ROW }],
  });
  if (rows && rows[0].length === 0) throw missing();
}

type IssuedInput = { domainName: string; certificatePem: string; privateKeyPem: string; now: Date };

/**
 * Stores a certificate the ACME CA issued for a domain, replacing the previous one of that domain. What the CA sent
 * is not trusted to fit the order: an AcmeError saying what does not fit leaves the previous certificate in place.
 */
export async function putAcmeCertificate(db: Database, input: IssuedInput): Promise<CertificateRow> {
  const info = await issuedCertificate(input);
  return replaceCertificate(db, { ...input, name: acmeCertificateName(input.domainName), source: "acme", info });
}

/**
 * A CA's clock may run ahead of the Worker's: a certificate beginning this much later is still taken, as one refused
 * would be ordered again a day later, and counted against the CA's limit of certificates for the same names.
 */
const CA_CLOCK_AHEAD_MS = 5 * 60_000;

/**
 * The leaf of an issued chain, once the chain reads, the leaf covers the domain, is valid now and belongs to the
 * order's key. Stored otherwise, the domain would go uncovered until the certificate's end (never renewed before),
 * and a key that does not match would make HAProxy refuse the whole configuration, every tenant's.
 */
async function issuedCertificate(input: IssuedInput): Promise<CertificateInfo> {
  const refused = (why: string) => new AcmeError(`the certificate the CA sent was not stored: ${why}`);
  let info: CertificateInfo;
  try {
    [info] = readCertificateChain(input.certificatePem);
  } catch (error) {
    if (error instanceof DerError) throw refused(error.message);
    throw error;
  }
  const { domainNames, notBefore, notAfter } = info;
  if (!domainNames.some((pattern) => nameCovers(pattern, input.domainName))) {
    const names =
      domainNames.slice(0, 5).join(", ") + (domainNames.length > 5 ? ` and ${domainNames.length - 5} more` : "");
    throw refused(`it is for ${names || "no name"}, not ${input.domainName}`);
  }
  if (notBefore.getTime() > input.now.getTime() + CA_CLOCK_AHEAD_MS)
    throw refused(`it is valid only from ${notBefore.toISOString()}`);
  if (notAfter <= input.now) throw refused(`it ended on ${notAfter.toISOString()}`);
  const mismatch = await keyMismatch(input.privateKeyPem, info);
  if (mismatch) throw refused(mismatch);
  return info;
}

/** The row of a certificate with the details read from its PEM (the PEM texts normalised). */
function certificateValues(input: {
  name: string;
  source: CertificateRow["source"];
  info: CertificateInfo;
  certificatePem: string;
  privateKeyPem: string;
  now: Date;
  /** The projects a provided certificate serves; absent: every project. */
  projectIds?: number[] | null;
}) {
  const { info } = input;
  return {
    name: input.name,
    source: input.source,
    domainNames: info.domainNames,
    issuer: info.issuer,
    serialNumber: info.serialNumber,
    notBefore: info.notBefore,
    notAfter: info.notAfter,
    certificatePem: normalisePem(input.certificatePem, "CERTIFICATE"),
    privateKeyPem: normalisePem(input.privateKeyPem, "PRIVATE KEY"),
    projectIds: input.projectIds ?? null,
    updatedAt: input.now,
  };
}

/** Stores a certificate under its name, replacing the one stored under that name, in one statement. */
async function replaceCertificate(
  db: Database,
  input: Parameters<typeof certificateValues>[0],
): Promise<CertificateRow> {
  const values = certificateValues(input);
  const [row] = await db
    .insert(certificates)
    .values(values)
    .onConflictDoUpdate({ target: certificates.name, set: values })
    .returning();
  return row;
}

/**
 * The fallback certificate, created once (self-signed, ten years): HAProxy refuses an https frontend without any
 * certificate, and stored once it keeps the generated bundle a function of the database alone.
 */
export async function ensureFallbackCertificate(db: Database, now: Date): Promise<CertificateRow> {
  const existing = await findCertificate(db, FALLBACK_CERTIFICATE_NAME);
  if (existing) return existing;
  // Two first runs at once keep whichever was stored first.
  await db
    .insert(certificates)
    .values(await newFallbackCertificate(now))
    .onConflictDoNothing();
  return (await findCertificate(db, FALLBACK_CERTIFICATE_NAME))!;
}

/** A new fallback certificate (self-signed, ten years), not stored: ensureFallbackCertificate's, and a preview's. */
export async function newFallbackCertificate(now: Date): Promise<Omit<CertificateRow, "id">> {
  const notAfter = new Date(now.getTime() + 10 * 365 * 86_400_000);
  const generated = await selfSignedCertificate({ commonName: "fallback.invalid", notBefore: now, notAfter });
  const info = readCertificatePem(generated.certificatePem);
  return certificateValues({ name: FALLBACK_CERTIFICATE_NAME, source: "fallback", info, ...generated, now });
}
