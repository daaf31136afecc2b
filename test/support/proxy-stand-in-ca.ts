// A stand-in CA for the certificate job's tests in the Workers runtime, the job run against it with an injected clock
// and random source, and reads of what the job stored.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { AcmeError, type IssuedCertificate, type RenewalInfoAnswer } from "../../src/proxy/pki/acme-client";
import { acmeChangesUndeployed } from "../../src/proxy/haproxy/versions";
import { maintainCertificates, type CertificateIssuer } from "../../src/proxy/pki/maintenance";
import { ariCertificateId } from "../../src/proxy/pki/renewal";
import { readCertificatePem, selfSignedCertificate } from "../../src/proxy/pki/x509";
import { database } from "../../src/shared/db";
import { asAdmin, createBackend, expectJson } from "./proxy-api";
import { createProjectOnHost } from "./proxy-fixtures";

export const DAY = 86_400_000;
export const db = () => database(env.DB);

/** The key identifier of the stand-in CA when it offers ACME Renewal Information. */
const ARI_KEY_ID = Uint8Array.of(0x69, 0x88, 0x5b, 0x6b);

/**
 * A stand-in CA: issues a certificate valid `validDays` from the clock, or fails for the names in `failing`. With
 * `renewalInfo` it offers ACME Renewal Information: its certificates carry an Authority Key Identifier and it answers
 * each certificate ID with that function (which may throw). `orders` and `asked` record what the job asked of it.
 */
export function fakeCa(
  clock: { now: Date },
  options: {
    failing?: Set<string>;
    validDays?: number;
    prepareError?: Error;
    /** What obtaining a `failing` name throws (the CA's refusal when not given). */
    obtainError?: Error;
    renewalInfo?: (certificateId: string) => RenewalInfoAnswer;
  } = {},
) {
  const obtained: string[] = [];
  const orders: { domainName: string; replaces?: string }[] = [];
  const asked: string[] = [];
  let prepared = 0;
  const issuer: CertificateIssuer = {
    async prepare() {
      prepared++;
      if (options.prepareError) throw options.prepareError;
    },
    async obtain(domainName, replaces): Promise<IssuedCertificate> {
      obtained.push(domainName);
      orders.push(replaces ? { domainName, replaces } : { domainName });
      if (options.failing?.has(domainName))
        throw options.obtainError ?? new AcmeError(`authorization of ${domainName} is invalid: connection refused`);
      const notBefore = new Date(clock.now.getTime() - 60_000);
      return selfSignedCertificate({
        commonName: domainName,
        notBefore,
        notAfter: new Date(notBefore.getTime() + (options.validDays ?? 90) * DAY),
        ...(options.renewalInfo ? { authorityKeyIdentifier: ARI_KEY_ID } : {}),
      });
    },
    async renewalInfo(certificateId) {
      if (!options.renewalInfo) return undefined;
      asked.push(certificateId);
      return options.renewalInfo(certificateId);
    },
  };
  return { issuer, obtained, orders, asked, prepared: () => prepared };
}

/** One run of the job; `random` is what every draw of a renewal point gets. */
export function run(
  clock: { now: Date },
  issuer: CertificateIssuer,
  random = 0.5,
  renewalInfoPerRun = 200,
  ordersPerRun = 40,
) {
  const queued: number[] = [];
  const followUps: number[] = [];
  let lockKept = 0;
  const warnings = maintainCertificates(db(), {
    settings: { CERT_WARN_DAYS: 14, ACME_RENEWAL_INFO_PER_RUN: renewalInfoPerRun, ACME_ORDERS_PER_RUN: ordersPerRun },
    issuer,
    now: () => clock.now,
    random: () => random,
    keepLock: async () => {
      lockKept++;
    },
    queueGenSync: async () => {
      queued.push(queued.length + 100);
      return queued.length + 99;
    },
    queueFollowUp: () => {
      followUps.push(followUps.length + 1);
    },
    acmeChangesUndeployed: () => acmeChangesUndeployed(db()),
  });
  return { warnings, queued, followUps, lockKept: () => lockKept };
}

/**
 * Takes away every domain, certificate and attempt: a run of the job handles all of them, so a test that reads whole
 * runs starts from none, whichever test ran before it.
 */
export async function forgetCertificates() {
  await env.DB.batch(
    ["delete from domains", "delete from certificates", "delete from certificate_attempts"].map((query) =>
      env.DB.prepare(query),
    ),
  );
}

export async function askForCertificates(project: string, backend: string, names: string[], enableSSL = true) {
  await expectJson(
    asAdmin("/domains/massupdate", "POST", {
      domainOperations: names.map((domainName) => ({
        operation: "CREATE",
        domainName,
        projectLabel: project,
        backendLabel: backend,
        enableSSL,
      })),
    }),
    200,
  );
}

export const attempt = async (domainName: string) =>
  env.DB.prepare(
    "select outcome, consecutive_failures as failures, last_error as error from certificate_attempts where domain_name = ?",
  )
    .bind(domainName)
    .first();

export const acmeRow = async (domainName: string) =>
  env.DB.prepare("select name, source, domain_names as names, not_after as notAfter from certificates where name = ?")
    .bind(`acme_${domainName}`)
    .first();

/** The ARI certificate ID of a domain's stored ACME certificate. */
export async function ariIdOf(domainName: string): Promise<string> {
  const row = await env.DB.prepare("select certificate_pem as pem from certificates where name = ?")
    .bind(`acme_${domainName}`)
    .first<{ pem: string }>();
  const id = ariCertificateId(readCertificatePem(row!.pem));
  expect(id).toBeDefined();
  return id!;
}

/** The renewal window stored for a domain's ACME certificate. */
export const windowRow = async (domainName: string) =>
  env.DB.prepare(
    `select w.ari_certificate_id as id, w.window_start as start, w.window_end as end, w.renew_at as renewAt,
       w.next_poll_at as nextPollAt, w.explanation_url as explanationUrl
     from certificate_renewal_windows w join certificates c on c.id = w.certificate_id where c.name = ?`,
  )
    .bind(`acme_${domainName}`)
    .first();

/**
 * A project with one container on a host of its own and one backend serving it: where a suite's domains ask for
 * certificates. `n` (one hex digit) keeps the host's and container's addresses apart from other suites'.
 */
export async function certificateProject(project: string, backend: string, n: string) {
  const { web } = await createProjectOnHost(project, {
    hostname: `${project}-node.example.net`,
    ipv6: `2001:db8::${n}`,
    containers: { web: `2001:db8::${n}1` },
  });
  await createBackend(project, { label: backend, backendContainers: [{ containerId: web }] });
}
