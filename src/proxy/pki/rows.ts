// A certificate row as a plain interface (tables.ts checks at compile time that it equals its drizzle row), so that
// certificate selection and the HAProxy generator use it without loading drizzle.

export interface CertificateRow {
  id: number;
  name: string;
  source: "acme" | "provided" | "fallback";
  /** DNS names of the subjectAltName extension, lower-cased (wildcards as `*.example.com`). */
  domainNames: string[];
  issuer: string;
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
  /** The leaf first, then the chain (PEM). */
  certificatePem: string;
  /** PKCS#8 PEM. */
  privateKeyPem: string;
  /** A provided certificate's projects (ids): it serves only their domains; null serves every project. */
  projectIds: number[] | null;
  updatedAt: Date;
}
