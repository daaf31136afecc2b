// The certificate job with lists longer than the 100 parameters D1 binds in one statement: an installation removing
// or shipping that many certificates at once must not fail the run (which would stop every renewal after it).
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { certificates } from "../../../src/proxy/pki/tables";
import { selfSignedCertificate } from "../../../src/proxy/pki/x509";
import { DAY, db, fakeCa, forgetCertificates, run } from "../../support/proxy-stand-in-ca";

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
