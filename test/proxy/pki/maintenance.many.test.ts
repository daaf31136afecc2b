// The certificate job with lists longer than the 100 parameters D1 binds in one statement: an installation removing
// or shipping that many certificates at once must not fail the run (which would stop every renewal after it).
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ordersPerRun } from "../../../src/proxy/pki/maintenance";
import { certificates } from "../../../src/proxy/pki/tables";
import { selfSignedCertificate } from "../../../src/proxy/pki/x509";
import {
  askForCertificates,
  certificateProject,
  DAY,
  db,
  fakeCa,
  forgetCertificates,
  run,
} from "../../support/proxy-stand-in-ca";

beforeAll(async () => {
  await certificateProject("many", "bulk", "d");
});

beforeEach(forgetCertificates);

/** `count` ACME certificates, as earlier runs stored them, for domains that no longer ask for one. */
async function storeUnwanted(count: number): Promise<string[]> {
  const notAfter = new Date("2027-05-01T00:00:00Z");
  const pem = await selfSignedCertificate({
    commonName: "unwanted.example",
    notBefore: new Date(notAfter.getTime() - 90 * DAY),
    notAfter,
  });
  const domains = Array.from({ length: count }, (_, i) => `u${String(i).padStart(3, "0")}.unwanted.example`);
  for (const domain of domains) {
    await db()
      .insert(certificates)
      .values({
        name: `acme_${domain}`,
        source: "acme",
        domainNames: [domain],
        issuer: "CN=unwanted.example",
        serialNumber: "01",
        notBefore: new Date(notAfter.getTime() - 90 * DAY),
        notAfter,
        ...pem,
      });
  }
  return domains;
}

describe("certificates no domain asks for", () => {
  it("removes 101 of them in one run and queues one gensynchaprx", async () => {
    const domains = await storeUnwanted(101);
    const clock = { now: new Date("2027-03-01T00:05:00Z") };
    const { warnings, queued } = run(clock, fakeCa(clock).issuer);
    expect(await warnings).toEqual([
      ...domains.map(
        (domain) =>
          `INFO: Certificate acme_${domain} was removed: no domain asks for a public CA certificate for ${domain} any more`,
      ),
      "INFO: certificates changed: HAProxy configuration job 100 queued",
    ]);
    expect(queued).toHaveLength(1);
    expect(await env.DB.prepare("select count(*) as n from certificates where source = 'acme'").first()).toEqual({
      n: 0,
    });
  });
});

describe("more domains due than ACME_ORDERS_PER_RUN", () => {
  it("orders that many, queues another certificate run for the rest, and that run orders them", async () => {
    const domains = Array.from({ length: 45 }, (_, i) => `d${String(i).padStart(2, "0")}.bulk.example`);
    await askForCertificates("many", "bulk", domains);
    const clock = { now: new Date("2026-12-01T10:00:00Z") };
    const obtainedLine = (domain: string) =>
      `INFO: Certificate acme_${domain} obtained from CN=${domain}, valid until 2027-03-01T09:59:00.000Z`;

    const ca = fakeCa(clock);
    const first = run(clock, ca.issuer, 0.5, 200, 40);
    expect(await first.warnings).toEqual([
      ...domains.slice(0, 40).map(obtainedLine),
      "INFO: 5 more due past this run's 40 orders: another certificate run follows",
      "INFO: certificates changed: HAProxy configuration job 100 queued",
    ]);
    expect(ca.obtained).toEqual(domains.slice(0, 40));
    expect(first.followUps).toHaveLength(1);

    const followUp = fakeCa(clock);
    const second = run(clock, followUp.issuer, 0.5, 200, 40);
    expect(await second.warnings).toEqual([
      ...domains.slice(40).map(obtainedLine),
      "INFO: certificates changed: HAProxy configuration job 100 queued",
    ]);
    expect(followUp.obtained).toEqual(domains.slice(40));
    expect(second.followUps).toEqual([]);
  });
});

describe("the orders a run may make", () => {
  it("are ACME_ORDERS_PER_RUN, fewer when the renewal questions take their subrequests, never none", () => {
    expect(ordersPerRun({ ACME_RENEWAL_INFO_PER_RUN: 200, ACME_ORDERS_PER_RUN: 40 })).toBe(40);
    // 1,000 - 60 for the run itself - 200 questions leaves 740: 49 orders of 15.
    expect(ordersPerRun({ ACME_RENEWAL_INFO_PER_RUN: 200, ACME_ORDERS_PER_RUN: 60 })).toBe(49);
    expect(ordersPerRun({ ACME_RENEWAL_INFO_PER_RUN: 900, ACME_ORDERS_PER_RUN: 40 })).toBe(2);
    expect(ordersPerRun({ ACME_RENEWAL_INFO_PER_RUN: 940, ACME_ORDERS_PER_RUN: 40 })).toBe(1);
  });

  it("with 900 renewal questions allowed, orders 2 and leaves the rest to the run that follows", async () => {
    const domains = ["a.few.example", "b.few.example", "c.few.example"];
    await askForCertificates("many", "bulk", domains);
    const clock = { now: new Date("2026-12-01T10:00:00Z") };
    const ca = fakeCa(clock);
    const { warnings, followUps } = run(clock, ca.issuer, 0.5, 900, 40);
    expect(await warnings).toEqual([
      "INFO: Certificate acme_a.few.example obtained from CN=a.few.example, valid until 2027-03-01T09:59:00.000Z",
      "INFO: Certificate acme_b.few.example obtained from CN=b.few.example, valid until 2027-03-01T09:59:00.000Z",
      "INFO: 1 more due past this run's 2 orders: another certificate run follows",
      "INFO: certificates changed: HAProxy configuration job 100 queued",
    ]);
    expect(followUps).toEqual([1]);
  });
});
