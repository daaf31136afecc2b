// D1 tables of the certificates and the ACME state (drizzle schema; drizzle-kit generates migrations/ from every
// tables.ts).
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { AllTrue, SameType } from "../installation/rows";
import type { CertificateRow } from "./rows";

/**
 * Certificates with their private keys, shipped to the load balancers as `certs/<name>.pem`. ACME certificates are
 * named after their domain; provided ones are uploaded by the administrator; the fallback is the self-signed
 * default certificate HAProxy needs when nothing else matches.
 */
export const certificates = sqliteTable(
  "certificates",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull().unique(),
    source: text("source", { enum: ["acme", "provided", "fallback"] }).notNull(),
    /** DNS names of the subjectAltName extension, lower-cased (wildcards as `*.example.com`). */
    domainNames: text("domain_names", { mode: "json" }).$type<string[]>().notNull(),
    issuer: text("issuer").notNull(),
    serialNumber: text("serial_number").notNull(),
    notBefore: integer("not_before", { mode: "timestamp_ms" }).notNull(),
    notAfter: integer("not_after", { mode: "timestamp_ms" }).notNull(),
    /** The leaf first, then the chain (PEM). */
    certificatePem: text("certificate_pem").notNull(),
    /** PKCS#8 PEM. */
    privateKeyPem: text("private_key_pem").notNull(),
    /**
     * A provided certificate's projects (ids): it serves only their domains. Null: every project's (ACME and fallback
     * certificates, and provided ones stored without a list).
     */
    projectIds: text("project_ids", { mode: "json" }).$type<number[]>(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" })
      .notNull()
      .default(sql`(unixepoch() * 1000)`),
  },
  (table) => [index("certificates_not_after_idx").on(table.notAfter)],
);

/**
 * The CA's renewal window of an ACME certificate (ACME Renewal Information, RFC 9773), with the point chosen in it
 * and when the CA may be asked again. Removing the certificate removes it; a renewed certificate keeps its row id, so
 * the row also names the ARI certificate ID it was given for, and a row for another ID is stale.
 */
export const certificateRenewalWindows = sqliteTable("certificate_renewal_windows", {
  certificateId: integer("certificate_id")
    .primaryKey()
    .references(() => certificates.id, { onDelete: "cascade" }),
  ariCertificateId: text("ari_certificate_id").notNull(),
  windowStart: integer("window_start", { mode: "timestamp_ms" }).notNull(),
  windowEnd: integer("window_end", { mode: "timestamp_ms" }).notNull(),
  /** The point drawn in the window: the certificate is renewed by the first run at or after it. */
  renewAt: integer("renew_at", { mode: "timestamp_ms" }).notNull(),
  /** The CA's Retry-After, bounded: it is not asked about this certificate before then. */
  nextPollAt: integer("next_poll_at", { mode: "timestamp_ms" }).notNull(),
  explanationUrl: text("explanation_url"),
  checkedAt: integer("checked_at", { mode: "timestamp_ms" }).notNull(),
});

/** The last ACME attempt per domain: keeps failing domains to one attempt a day (and less after repeated failures). */
export const certificateAttempts = sqliteTable("certificate_attempts", {
  domainName: text("domain_name").primaryKey(),
  lastAttemptAt: integer("last_attempt_at", { mode: "timestamp_ms" }).notNull(),
  /** pending while an order runs (a run that died counts as a failure), then succeeded or failed. */
  outcome: text("outcome", { enum: ["pending", "succeeded", "failed"] }).notNull(),
  consecutiveFailures: integer("consecutive_failures").notNull().default(0),
  lastError: text("last_error"),
});

/** The ACME account per directory URL: its private key (JWK) and the account URL the CA gave it. */
export const acmeAccounts = sqliteTable("acme_accounts", {
  directoryUrl: text("directory_url").primaryKey(),
  email: text("email"),
  privateJwk: text("private_jwk", { mode: "json" }).$type<JsonWebKey>().notNull(),
  accountUrl: text("account_url").notNull(),
  createdAt: integer("created_at", { mode: "timestamp_ms" })
    .notNull()
    .default(sql`(unixepoch() * 1000)`),
});

/** HTTP-01 challenges of pending orders, answered at GET /.well-known/acme-challenge/{token}. */
export const acmeChallenges = sqliteTable("acme_challenges", {
  token: text("token").primaryKey(),
  keyAuthorization: text("key_authorization").notNull(),
  domainName: text("domain_name").notNull(),
  createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
});

/** Fails to compile when rows.ts (the shape certificate selection uses) drifts from the table above. */
export type CertificateRowMatches = AllTrue<[SameType<CertificateRow, typeof certificates.$inferSelect>]>;
