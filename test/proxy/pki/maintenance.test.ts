// Certificates: the maintenance job's work with a stand-in CA (issuance, renewal when a third of the lifetime remains,
// the one-failure-per-day rule, removals, the INFO/WARN lines about certificates that end soon), and provided
// certificates through the API. Renewal by the CA's ACME Renewal Information: maintenance-renewal.test.ts.
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { AcmeError } from "../../../src/proxy/pki/acme-client";
import { createJobRun, finishJobRun } from "../../../src/jobs/history";
import { activateVersion, storeVersion } from "../../../src/proxy/haproxy/versions";
import { nextAttemptDay } from "../../../src/proxy/pki/maintenance";
import { certificates } from "../../../src/proxy/pki/tables";
import { selfSignedCertificate } from "../../../src/proxy/pki/x509";
import { createProjectOnHost } from "../../support/proxy-fixtures";
import { asAdmin, createBackend, errorBody, expectJson } from "../../support/proxy-api";
import otherEcCert from "../fixtures/other-ec.cert.pem?raw";
import otherEcKey from "../fixtures/other-ec.key.pem?raw";
import rsaCert from "../fixtures/provided-rsa.cert.pem?raw";
import rsaKey from "../fixtures/provided-rsa.key.pem?raw";
import {
  acmeRow,
  askForCertificates as askFor,
  attempt,
  DAY,
  db,
  fakeCa,
  forgetCertificates,
  run,
} from "../../support/proxy-stand-in-ca";

const askForCertificates = (backend: string, names: string[], enableSSL = true) =>
  askFor("certs", backend, names, enableSSL);

beforeAll(async () => {
  const { web } = await createProjectOnHost("certs", {
    hostname: "cert-node.example.net",
    ipv6: "2001:db8::c",
    containers: { web: "2001:db8::c1" },
  });
  for (const label of ["issue", "renew", "fail", "ending", "drop"])
    await createBackend("certs", { label, backendContainers: [{ containerId: web }] });
});

beforeEach(forgetCertificates);

describe("obtaining and renewing", () => {
  it("obtains a certificate for every domain that asks for one and queues one gensynchaprx", async () => {
    await askForCertificates("issue", ["b.issue.example", "a.issue.example"]);
    await askForCertificates("issue", ["plain.issue.example"], false);
    const clock = { now: new Date("2026-12-01T10:00:00Z") };
    const ca = fakeCa(clock);
    const { warnings, queued, lockKept } = run(clock, ca.issuer);
    const result = await warnings;
    expect(ca.obtained).toEqual(["a.issue.example", "b.issue.example"]);
    expect(ca.prepared()).toBe(1);
    expect(lockKept()).toBe(2);
    expect(queued).toHaveLength(1);
    expect(result).toEqual([
      "INFO: Certificate acme_a.issue.example obtained from CN=a.issue.example, valid until 2027-03-01T09:59:00.000Z",
      "INFO: Certificate acme_b.issue.example obtained from CN=b.issue.example, valid until 2027-03-01T09:59:00.000Z",
      "INFO: certificates changed: HAProxy configuration job 100 queued",
    ]);
    expect(await acmeRow("a.issue.example")).toEqual({
      name: "acme_a.issue.example",
      source: "acme",
      names: '["a.issue.example"]',
      notAfter: Date.parse("2027-03-01T09:59:00Z"),
    });
    expect(await attempt("a.issue.example")).toEqual({ outcome: "succeeded", failures: 0, error: null });

    // Nothing is due an hour later: no CA contact, nothing queued.
    const later = { now: new Date("2026-12-01T11:00:00Z") };
    const idle = fakeCa(later);
    const second = run(later, idle.issuer);
    expect(await second.warnings).toEqual([]);
    expect(idle.prepared()).toBe(0);
    expect(second.queued).toEqual([]);
  });

  it("renews a certificate when a third of its lifetime remains (CA without renewal information)", async () => {
    await askForCertificates("renew", ["renew.example"]);
    const clock = { now: new Date("2026-12-01T10:00:00Z") };
    await run(clock, fakeCa(clock).issuer).warnings;
    const first = await acmeRow("renew.example");

    clock.now = new Date("2027-01-30T09:58:00Z"); // 90 days from 09:59 on Dec 1: a minute before 30 days are left
    const early = fakeCa(clock);
    await run(clock, early.issuer).warnings;
    expect(early.obtained).not.toContain("renew.example");

    clock.now = new Date("2027-01-30T09:59:00Z");
    const due = fakeCa(clock);
    expect((await run(clock, due.issuer).warnings).filter((w) => w.includes("renew.example"))).toEqual([
      "INFO: Certificate acme_renew.example obtained from CN=renew.example, valid until 2027-04-30T09:58:00.000Z; renewed with a third of its lifetime left",
    ]);
    expect(due.orders.filter((order) => order.domainName === "renew.example")).toEqual([
      { domainName: "renew.example" },
    ]);
    expect((await acmeRow("renew.example"))!.notAfter).toBeGreaterThan(first!.notAfter as number);
  });
});

describe("certificates a run changed and never shipped", () => {
  /** An active HAProxy version created at `createdAt` (what the last gensynchaprx left). */
  async function versionInForce(createdAt: Date, certificateFiles: { file: string; name: string }[] = []) {
    const runId = await createJobRun(db(), { kind: "housekeeping", trigger: "test" });
    const files = { "haproxy.cfg": "# in force\n" };
    const version = await storeVersion(db(), {
      digest: "sha256:x",
      jobRunId: runId,
      files,
      certificateFiles,
      now: createdAt,
    });
    await activateVersion(db(), version, 10);
  }

  it("queue a gensynchaprx when the version in force predates one, unless one is on its way", async () => {
    await env.DB.batch(
      [
        "delete from haproxy_version_files",
        "delete from haproxy_versions",
        "delete from job_runs where kind = 'gensynchaprx'",
      ].map((query) => env.DB.prepare(query)),
    );
    await askForCertificates("issue", ["undeployed.example"]);
    const clock = { now: new Date("2026-12-01T10:00:00Z") };
    await versionInForce(new Date("2026-12-01T09:00:00Z"));
    // The run that obtained it queued a gensynchaprx, which never shipped it (it died first, say).
    const first = run(clock, fakeCa(clock).issuer);
    await first.warnings;
    expect(first.queued).toEqual([100]);
    expect(await acmeRow("undeployed.example")).toMatchObject({ name: "acme_undeployed.example" });

    clock.now = new Date("2026-12-02T10:00:00Z");
    const next = run(clock, fakeCa(clock).issuer);
    expect(await next.warnings).toEqual([
      "INFO: the version in force predates ACME certificate changes: HAProxy configuration job 100 queued",
    ]);

    const onItsWay = await createJobRun(db(), { kind: "gensynchaprx", trigger: "test" });
    expect(await run(clock, fakeCa(clock).issuer).warnings).toEqual([]);
    await finishJobRun(db(), { id: onItsWay, now: clock.now, state: "succeeded" });
    await versionInForce(new Date("2026-12-02T09:00:00Z"), [
      { file: "certs/acme_gone.pem", name: "acme_gone.example" },
    ]);
    expect(await run(clock, fakeCa(clock).issuer).warnings).toEqual([
      "INFO: the version in force predates ACME certificate changes: HAProxy configuration job 100 queued",
    ]);

    await versionInForce(new Date("2026-12-02T09:30:00Z"));
    expect(await run(clock, fakeCa(clock).issuer).warnings).toEqual([]);
  });
});

describe("failures", () => {
  it("tries a failing domain at most once per UTC day, then after 2, 4 and 7 days", async () => {
    await askForCertificates("fail", ["fail.example"]);
    const clock = { now: new Date("2026-12-10T00:05:00Z") };
    const failing = new Set(["fail.example"]);
    const first = fakeCa(clock, { failing });
    const firstRun = run(clock, first.issuer);
    expect((await firstRun.warnings).filter((w) => w.includes("fail.example"))).toEqual([
      "WARN: no certificate for fail.example: authorization of fail.example is invalid: connection refused; next attempt on 2026-12-11T00:00:00.000Z",
    ]);
    expect(first.obtained).toContain("fail.example");
    expect(await attempt("fail.example")).toEqual({
      outcome: "failed",
      failures: 1,
      error: "authorization of fail.example is invalid: connection refused",
    });

    // Same day, even just before midnight: no second attempt.
    clock.now = new Date("2026-12-10T23:59:00Z");
    const sameDay = fakeCa(clock, { failing });
    expect((await run(clock, sameDay.issuer).warnings).filter((w) => w.includes("fail.example"))).toEqual([
      "WARN: no new attempt for fail.example before 2026-12-11T00:00:00.000Z: the last one failed (authorization of fail.example is invalid: connection refused)",
    ]);
    expect(sameDay.obtained).not.toContain("fail.example");

    // The next day it is tried again; a second failure waits two days.
    clock.now = new Date("2026-12-11T00:05:00Z");
    const nextDay = fakeCa(clock, { failing });
    expect((await run(clock, nextDay.issuer).warnings).filter((w) => w.includes("fail.example"))).toEqual([
      "WARN: no certificate for fail.example: authorization of fail.example is invalid: connection refused; next attempt on 2026-12-13T00:00:00.000Z",
    ]);
    expect(await attempt("fail.example")).toMatchObject({ outcome: "failed", failures: 2 });

    clock.now = new Date("2026-12-12T12:00:00Z");
    const tooEarly = fakeCa(clock, { failing });
    await run(clock, tooEarly.issuer).warnings;
    expect(tooEarly.obtained).not.toContain("fail.example");

    // It works again on day 13: the failures are forgotten.
    clock.now = new Date("2026-12-13T00:05:00Z");
    const works = fakeCa(clock);
    await run(clock, works.issuer).warnings;
    expect(works.obtained).toContain("fail.example");
    expect(await attempt("fail.example")).toEqual({ outcome: "succeeded", failures: 0, error: null });
  });

  it("records an internal failure as such: no SQL, parameters or key material in the warning or the attempt", async () => {
    await askForCertificates("fail", ["internal.fail.example"]);
    const clock = { now: new Date("2026-12-20T00:05:00Z") };
    const leak = "Failed query: insert into certificates params: -----BEGIN PRIVATE KEY-----MIGHAgEAMBMG";
    const ca = fakeCa(clock, { failing: new Set(["internal.fail.example"]), obtainError: new Error(leak) });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    expect((await run(clock, ca.issuer).warnings).filter((w) => w.includes("internal.fail.example"))).toEqual([
      "WARN: no certificate for internal.fail.example: internal error (see the logs); next attempt on 2026-12-21T00:00:00.000Z",
    ]);
    expect(await attempt("internal.fail.example")).toEqual({
      outcome: "failed",
      failures: 1,
      error: "internal error (see the logs)",
    });
    expect(errors).toHaveBeenCalledTimes(1);
    expect(String(errors.mock.calls[0][0])).toContain(leak);
    errors.mockRestore();
  });

  it("stops ordering when the CA rate-limits the account: the names after it are neither tried nor charged", async () => {
    const names = ["a.limited.example", "b.limited.example", "c.limited.example"];
    await askForCertificates("fail", names);
    const clock = { now: new Date("2026-12-22T00:05:00Z") };
    const limited = new AcmeError("too many new orders recently", "urn:ietf:params:acme:error:rateLimited", 429);
    const ca = fakeCa(clock, { failing: new Set(names), obtainError: limited });
    const { warnings, queued } = run(clock, ca.issuer);
    expect(await warnings).toEqual([
      "WARN: no certificate for a.limited.example: too many new orders recently; next attempt on 2026-12-23T00:00:00.000Z",
      "WARN: the CA limits this account's orders: 2 more due, not tried until the next run",
    ]);
    expect(ca.obtained).toEqual(["a.limited.example"]);
    expect(queued).toEqual([]);
    expect(await attempt("b.limited.example")).toBeNull();

    clock.now = new Date("2026-12-22T06:00:00Z");
    const later = fakeCa(clock);
    await run(clock, later.issuer).warnings;
    expect(later.obtained).toEqual(["b.limited.example", "c.limited.example"]);
  });

  it("counts an attempt left pending by a run that died as a failure, and backs off up to a week", () => {
    const base = { domainName: "x", lastAttemptAt: new Date("2026-12-10T12:00:00Z"), lastError: null };
    const day = (iso: string) => Math.floor(Date.parse(iso) / DAY);
    expect(nextAttemptDay(undefined)).toBeUndefined();
    expect(nextAttemptDay({ ...base, outcome: "succeeded", consecutiveFailures: 0 })).toBeUndefined();
    expect(nextAttemptDay({ ...base, outcome: "pending", consecutiveFailures: 0 })).toBe(day("2026-12-11"));
    expect(nextAttemptDay({ ...base, outcome: "failed", consecutiveFailures: 3 })).toBe(day("2026-12-14"));
    expect(nextAttemptDay({ ...base, outcome: "failed", consecutiveFailures: 9 })).toBe(day("2026-12-17"));
  });

  it("fails the whole run when the CA's directory or account fails, charging no domain", async () => {
    await askForCertificates("fail", ["directory-down.example"]);
    const clock = { now: new Date("2026-12-20T00:05:00Z") };
    const ca = fakeCa(clock, { prepareError: new Error("ACME directory https://acme.test/dir answered HTTP 503") });
    await expect(run(clock, ca.issuer).warnings).rejects.toThrow(
      "ACME directory https://acme.test/dir answered HTTP 503",
    );
    expect(ca.obtained).toEqual([]);
    expect(await attempt("directory-down.example")).toBeNull();
  });
});

describe("ending and removed certificates", () => {
  it("names certificates in use that end within CERT_WARN_DAYS (INFO for ACME, WARN for provided) and removes expired ones", async () => {
    await askForCertificates("ending", ["soon.ending.example"]);
    await askForCertificates("ending", ["provided.ending.example", "gone.ending.example"], false);
    const clock = { now: new Date("2027-02-01T00:05:00Z") };
    const insert = async (name: string, source: "acme" | "provided", domain: string, notAfter: Date) => {
      const pem = await selfSignedCertificate({
        commonName: domain,
        notBefore: new Date(notAfter.getTime() - 90 * DAY),
        notAfter,
      });
      await db()
        .insert(certificates)
        .values({
          name,
          source,
          domainNames: [domain],
          issuer: `CN=${domain}`,
          serialNumber: "01",
          notBefore: new Date(notAfter.getTime() - 90 * DAY),
          notAfter,
          ...pem,
        });
    };
    await insert("acme_soon.ending.example", "acme", "soon.ending.example", new Date("2027-02-10T00:00:00Z"));
    await insert("provided-soon", "provided", "provided.ending.example", new Date("2027-02-08T00:00:00Z"));
    await insert("provided-expired", "provided", "gone.ending.example", new Date("2027-01-31T00:00:00Z"));
    // The ACME certificate is due for renewal but the CA refuses, so it still ends soon after the run.
    const ca = fakeCa(clock, { failing: new Set(["soon.ending.example"]) });
    const result = await run(clock, ca.issuer).warnings;
    expect(result.filter((w) => w.includes("ending.example"))).toEqual([
      "WARN: Certificate provided-expired ended on 2027-01-31T00:00:00.000Z and was removed. It covered gone.ending.example",
      "WARN: no certificate for soon.ending.example: authorization of soon.ending.example is invalid: connection refused; next attempt on 2027-02-02T00:00:00.000Z",
      "INFO: Certificate acme_soon.ending.example ends on 2027-02-10T00:00:00.000Z. It covers the domain names soon.ending.example",
      "WARN: Certificate provided-soon ends on 2027-02-08T00:00:00.000Z. It covers the domain names provided.ending.example",
    ]);
    expect(result.at(-1)).toMatch(/^INFO: certificates changed: HAProxy configuration job \d+ queued$/);
    expect(
      await env.DB.prepare("select count(*) as n from certificates where name = 'provided-expired'").first(),
    ).toEqual({ n: 0 });
  });

  it("removes the ACME certificate of a domain that no longer asks for one", async () => {
    await askForCertificates("drop", ["drop.example"]);
    const clock = { now: new Date("2027-03-01T00:05:00Z") };
    await run(clock, fakeCa(clock).issuer).warnings;
    expect(await acmeRow("drop.example")).not.toBeNull();
    await askForCertificates("drop", ["drop.example"], false);
    const second = run(clock, fakeCa(clock).issuer);
    expect((await second.warnings).filter((w) => w.includes("drop.example"))).toEqual([
      "INFO: Certificate acme_drop.example was removed: no domain asks for a public CA certificate for drop.example any more",
    ]);
    expect(second.queued).toHaveLength(1);
    expect(await acmeRow("drop.example")).toBeNull();
  });
});

describe("provided certificates through the API", () => {
  it("stores a certificate with its key, lists it without the key, and lets enableSSL see it", async () => {
    const stored = await expectJson(
      asAdmin("/admin/certificates/example-org", "PUT", { certificatePem: rsaCert, privateKeyPem: rsaKey }),
      200,
    );
    expect(stored).toEqual({
      domainNames: ["www.example.org", "*.shop.example.org"],
      file: "certs/example-org.pem",
      issuer: "C=AU, O=Example Pty Ltd, CN=www.example.org",
      name: "example-org",
      notAfter: "2126-10-29T01:23:58.000Z",
      notBefore: "2026-11-22T01:23:58.000Z",
      serialNumber: "0123456789abcdef",
      source: "provided",
    });
    const listed = await expectJson(asAdmin("/admin/certificates"), 200);
    expect(listed.find((c: { name: string }) => c.name === "example-org")).toEqual(stored);
    expect(JSON.stringify(listed)).not.toContain("PRIVATE KEY");

    await askForCertificates("issue", ["www.example.org", "a.shop.example.org", "www.example.net"]);
    const domains = await expectJson(asAdmin("/domains/certs/issue"), 200);
    expect(
      [domains["www.example.org"], domains["a.shop.example.org"], domains["www.example.net"]].map((d) => [
        d.certProvided,
        d.publicCaCertificate,
      ]),
    ).toEqual([
      [true, false],
      [true, false],
      [false, true],
    ]);
  });

  it("refuses a key of another certificate, a key that is not PKCS#8, a bad name and a non-certificate", async () => {
    expect(
      await expectJson(
        asAdmin("/admin/certificates/mixed", "PUT", { certificatePem: otherEcCert, privateKeyPem: rsaKey }),
        400,
      ),
    ).toEqual(errorBody(expect.stringMatching(/^privateKeyPem: /) as unknown as string));
    expect(
      await expectJson(
        asAdmin("/admin/certificates/ec", "PUT", {
          certificatePem: otherEcCert,
          privateKeyPem: otherEcKey.replaceAll("PRIVATE KEY", "EC PRIVATE KEY"),
        }),
        400,
      ),
    ).toEqual(errorBody("privateKeyPem: the private key must be a PKCS#8 PEM block (BEGIN PRIVATE KEY)"));
    expect(
      await expectJson(
        asAdmin("/admin/certificates/Bad_Name", "PUT", { certificatePem: otherEcCert, privateKeyPem: otherEcKey }),
        400,
      ),
    ).toEqual(errorBody("name: must be 1 to 100 lowercase letters, digits, dots or hyphens"));
    // The self-signed fallback's name: a provided certificate would replace it, and the generation would miss it.
    expect(
      await expectJson(
        asAdmin("/admin/certificates/fallback", "PUT", { certificatePem: otherEcCert, privateKeyPem: otherEcKey }),
        400,
      ),
    ).toEqual(errorBody("name: fallback is reserved for the self-signed fallback certificate"));
    const fallbacks = await env.DB.prepare("select source from certificates where name = 'fallback'").all();
    expect(fallbacks.results.filter((row) => row.source !== "fallback")).toEqual([]);
    expect(
      (
        await expectJson(
          asAdmin("/admin/certificates/nothing", "PUT", { certificatePem: "hello", privateKeyPem: otherEcKey }),
          400,
        )
      ).payload,
    ).toBe("certificatePem: not a PEM X.509 certificate (no CERTIFICATE block)");
    expect(
      await expectJson(
        asAdmin("/admin/certificates/ec", "PUT", { certificatePem: otherEcCert, privateKeyPem: otherEcKey }),
        200,
      ),
    ).toMatchObject({
      name: "ec",
      domainNames: ["other.example.org"],
    });
  });

  it("deletes a provided certificate, and only a provided one", async () => {
    await expectJson(
      asAdmin("/admin/certificates/ec", "PUT", { certificatePem: otherEcCert, privateKeyPem: otherEcKey }),
      200,
    );
    await askForCertificates("issue", ["acme-kept.example"]);
    const clock = { now: new Date("2026-12-01T10:00:00Z") };
    await run(clock, fakeCa(clock).issuer).warnings;
    expect(await expectJson(asAdmin("/admin/certificates/ec", "DELETE"), 200)).toEqual({
      success: true,
      payload: "Deleted certificate ec",
      warnings: [],
    });
    expect(await expectJson(asAdmin("/admin/certificates/ec", "DELETE"), 404)).toEqual(
      errorBody("Invalid certificate: name ec not existing"),
    );
    expect((await asAdmin("/admin/certificates/acme_acme-kept.example", "DELETE")).status).toBe(404);
    expect(await acmeRow("acme-kept.example")).not.toBeNull();
  });
});
