// A renewal the CA answers with a certificate that does not fit the order (not the order's key, other names, not
// valid now, a chain holding something else): nothing is stored, the certificate before it stays, and the attempt
// fails with what was wrong, to be tried again the next day.
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { IssuedCertificate } from "../../../src/proxy/pki/acme-client";
import { selfSignedCertificate } from "../../../src/proxy/pki/x509";
import otherEcCert from "../fixtures/other-ec.cert.pem?raw";
import rsaKey from "../fixtures/provided-rsa.key.pem?raw";
import {
  askForCertificates,
  attempt,
  certificateProject,
  DAY,
  fakeCa,
  forgetCertificates,
  run,
} from "../../support/proxy-stand-in-ca";

const FIRST = new Date("2026-12-01T10:00:00Z");
/** Past the renewal point of the first certificate (90 days, a third of them left). */
const RENEWAL = new Date(FIRST.getTime() + 70 * DAY);

const storedRow = (domainName: string) =>
  env.DB.prepare("select * from certificates where name = ?").bind(`acme_${domainName}`).first();

/** The CA's answer: a certificate for `commonName` valid from `from` for `days`, with its own key. */
const issued = (commonName: string, from: Date, days = 90) =>
  selfSignedCertificate({ commonName, notBefore: from, notAfter: new Date(from.getTime() + days * DAY) });

/** A domain with a good certificate, renewed with the answer; what was stored before, and the renewal's warnings. */
async function renewWith(domainName: string, answer: (now: Date) => Promise<IssuedCertificate>) {
  await askForCertificates("unfit", "web", [domainName]);
  const clock = { now: FIRST };
  await run(clock, fakeCa(clock).issuer).warnings;
  const before = await storedRow(domainName);
  expect(before).toMatchObject({ domain_names: JSON.stringify([domainName]) });
  const later = { now: RENEWAL };
  const issuer = { ...fakeCa(later).issuer, obtain: () => answer(later.now) };
  return { before, warnings: await run(later, issuer).warnings };
}

beforeAll(async () => {
  await certificateProject("unfit", "web", "f");
});

beforeEach(forgetCertificates);

describe("a renewal answered with a certificate that does not fit the order", () => {
  const cases: [string, string, (now: Date) => Promise<IssuedCertificate>, string][] = [
    [
      "a certificate for the domain with another key",
      "key.unfit.example",
      async (now) => {
        const [certificate, another] = [await issued("key.unfit.example", now), await issued("key.unfit.example", now)];
        return { certificatePem: certificate.certificatePem, privateKeyPem: another.privateKeyPem };
      },
      "the private key does not belong to the certificate",
    ],
    [
      "a certificate for other names",
      "names.unfit.example",
      (now) => issued("other.example.org", now),
      "it is for other.example.org, not names.unfit.example",
    ],
    [
      "another domain's certificate valid for a century, with a key not its own",
      "century.unfit.example",
      async () => ({ certificatePem: otherEcCert, privateKeyPem: rsaKey }),
      "it is for other.example.org, not century.unfit.example",
    ],
    [
      "a certificate that has ended",
      "ended.unfit.example",
      (now) => issued("ended.unfit.example", new Date(now.getTime() - 100 * DAY)),
      "it ended on 2027-01-30T10:00:00.000Z",
    ],
    [
      "a certificate that begins tomorrow",
      "tomorrow.unfit.example",
      (now) => issued("tomorrow.unfit.example", new Date(now.getTime() + DAY)),
      "it is valid only from 2027-02-10T10:00:00.000Z",
    ],
    [
      "a chain that holds the private key too",
      "keyinchain.unfit.example",
      async (now) => {
        const answer = await issued("keyinchain.unfit.example", now);
        return { ...answer, certificatePem: answer.certificatePem + answer.privateKeyPem };
      },
      "the chain holds a PRIVATE KEY block, not only certificates",
    ],
    [
      "a chain whose second certificate cannot be read",
      "brokenchain.unfit.example",
      async (now) => {
        const answer = await issued("brokenchain.unfit.example", now);
        const broken = "-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n";
        return { ...answer, certificatePem: answer.certificatePem + broken };
      },
      "certificate 2 of the chain cannot be read: tbsCertificate: unexpected ASN.1 structure",
    ],
    [
      "no certificate at all",
      "empty.unfit.example",
      async (now) => ({ ...(await issued("empty.unfit.example", now)), certificatePem: "" }),
      "no CERTIFICATE block",
    ],
  ];

  it.each(cases)("%s: keeps the certificate before it and fails the attempt", async (_, domainName, answer, why) => {
    const { before, warnings } = await renewWith(domainName, answer);
    const error = `the certificate the CA sent was not stored: ${why}`;
    expect(warnings).toEqual([
      `WARN: no certificate for ${domainName}: ${error}; next attempt on 2027-02-10T00:00:00.000Z`,
    ]);
    expect(await storedRow(domainName)).toEqual(before);
    expect(await attempt(domainName)).toEqual({ outcome: "failed", failures: 1, error });
  });

  it("takes a certificate that begins a few minutes ahead, as a CA's clock may run ahead", async () => {
    const ahead = new Date(RENEWAL.getTime() + 4 * 60_000);
    const { warnings } = await renewWith("ahead.unfit.example", () => issued("ahead.unfit.example", ahead));
    expect(warnings).toEqual([
      "INFO: Certificate acme_ahead.unfit.example obtained from CN=ahead.unfit.example, valid until 2027-05-10T10:04:00.000Z; renewed with a third of its lifetime left",
      "INFO: certificates changed: HAProxy configuration job 100 queued",
    ]);
    expect(await storedRow("ahead.unfit.example")).toMatchObject({ not_before: ahead.getTime() });
  });

  it("renews the next day when the CA's answer fits again", async () => {
    const { before } = await renewWith("again.unfit.example", (now) => issued("other.example.org", now));
    const clock = { now: new Date(RENEWAL.getTime() + DAY) };
    expect(await run(clock, fakeCa(clock).issuer).warnings).toEqual([
      "INFO: Certificate acme_again.unfit.example obtained from CN=again.unfit.example, valid until 2027-05-11T09:59:00.000Z; renewed with a third of its lifetime left",
      "INFO: certificates changed: HAProxy configuration job 100 queued",
    ]);
    expect(await storedRow("again.unfit.example")).toMatchObject({
      id: before!.id,
      domain_names: '["again.unfit.example"]',
      not_after: Date.parse("2027-05-11T09:59:00.000Z"),
    });
    expect(await attempt("again.unfit.example")).toEqual({ outcome: "succeeded", failures: 0, error: null });
  });
});
