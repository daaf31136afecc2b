// DER and X.509 for the certificate jobs: reading certificates made by openssl, building CSRs and the self-signed
// fallback, matching keys to certificates, and wildcard coverage.
import { describe, expect, it } from "vitest";
import * as der from "../../../src/proxy/pki/der";
import {
  buildCsr,
  generateCertificateKey,
  keyMismatch,
  nameCovers,
  normalisePem,
  pemBlocks,
  readCertificatePem,
  selfSignedCertificate,
} from "../../../src/proxy/pki/x509";
import otherEcCert from "../fixtures/other-ec.cert.pem?raw";
import otherEcKey from "../fixtures/other-ec.key.pem?raw";
import rsaCert from "../fixtures/provided-rsa.cert.pem?raw";
import rsaKey from "../fixtures/provided-rsa.key.pem?raw";

describe("reading certificates", () => {
  it("reads names, issuer, serial and validity of an openssl certificate (UTCTime and GeneralizedTime)", () => {
    expect(readCertificatePem(rsaCert)).toMatchObject({
      domainNames: ["www.example.org", "*.shop.example.org"],
      issuer: "C=AU, O=Example Pty Ltd, CN=www.example.org",
      subject: "C=AU, O=Example Pty Ltd, CN=www.example.org",
      serialNumber: "0123456789abcdef",
      notBefore: new Date("2026-11-22T01:23:58Z"),
      notAfter: new Date("2126-10-29T01:23:58Z"),
    });
  });

  it("falls back to the common name when there is no subjectAltName", () => {
    expect(readCertificatePem(otherEcCert).domainNames).toEqual(["other.example.org"]);
  });

  it("refuses what is not a certificate", () => {
    expect(() => readCertificatePem("no pem here")).toThrow("no CERTIFICATE block");
    expect(() => readCertificatePem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----")).toThrow(
      der.DerError,
    );
  });

  it("re-encodes PEM blocks canonically, dropping text around them", () => {
    const messy = `subject=whatever\n${rsaCert.replaceAll("\n", "\r\n")}trailing`;
    expect(normalisePem(messy, "CERTIFICATE")).toBe(rsaCert);
  });
});

describe("keys and certificates", () => {
  it("matches RSA and EC keys to their certificates", async () => {
    expect(await keyMismatch(rsaKey, readCertificatePem(rsaCert))).toBeUndefined();
    expect(await keyMismatch(otherEcKey, readCertificatePem(otherEcCert))).toBeUndefined();
    expect(await keyMismatch(otherEcKey, readCertificatePem(rsaCert))).toMatch(
      /^the key cannot be read|does not belong/,
    );
    expect(await keyMismatch(rsaKey.replaceAll("PRIVATE KEY", "RSA PRIVATE KEY"), readCertificatePem(rsaCert))).toBe(
      "the private key must be a PKCS#8 PEM block (BEGIN PRIVATE KEY)",
    );
  });

  it("tells a key of another EC certificate apart", async () => {
    const generated = await selfSignedCertificate({
      commonName: "x.example",
      notBefore: new Date(),
      notAfter: new Date(Date.now() + 86_400_000),
    });
    expect(await keyMismatch(generated.privateKeyPem, readCertificatePem(otherEcCert))).toBe(
      "the private key does not belong to the certificate",
    );
  });

  it("builds a self-signed certificate that reads back and whose key matches", async () => {
    const notBefore = new Date("2026-01-01T00:00:00Z");
    const notAfter = new Date("2060-01-01T00:00:00Z");
    const generated = await selfSignedCertificate({ commonName: "fallback.invalid", notBefore, notAfter });
    const info = readCertificatePem(generated.certificatePem);
    expect(info).toMatchObject({
      domainNames: ["fallback.invalid"],
      issuer: "CN=fallback.invalid",
      notBefore,
      notAfter,
    });
    expect(await keyMismatch(generated.privateKeyPem, info)).toBeUndefined();
  });

  it("builds a PKCS#10 request whose signature verifies and which names the domain", async () => {
    const keys = await generateCertificateKey();
    const csr = await buildCsr(keys, ["shop.example.org"]);
    const [info, algorithm, signature] = der.children(der.parse(csr));
    expect(der.readObjectIdentifier(der.children(algorithm)[0])).toBe("1.2.840.10045.4.3.2");
    const [r, s] = der.children(der.parse(signature.content.subarray(1)));
    const raw = new Uint8Array(64);
    const magnitude = (node: der.Node) => node.content.subarray(node.content.length - 32);
    raw.set(magnitude(r), 32 - magnitude(r).length);
    raw.set(magnitude(s), 64 - magnitude(s).length);
    expect(await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, keys.publicKey, raw, info.raw)).toBe(true);
    const [version, subject, , attributes] = der.children(info);
    expect(Array.from(version.content)).toEqual([0]);
    const commonName = der.children(der.children(subject)[0])[0];
    expect(der.readString(der.children(commonName)[1])).toBe("shop.example.org");
    const [requestOid, requestValues] = der.children(der.children(attributes)[0]);
    expect(der.readObjectIdentifier(requestOid)).toBe("1.2.840.113549.1.9.14");
    const [sanOid, sanValue] = der.children(der.children(der.children(requestValues)[0])[0]);
    expect(der.readObjectIdentifier(sanOid)).toBe("2.5.29.17");
    expect(der.children(der.parse(sanValue.content)).map(der.readString)).toEqual(["shop.example.org"]);
  });
});

describe("DER", () => {
  it("encodes lengths in short and long form and reads them back", () => {
    for (const size of [0, 5, 127, 128, 300, 70_000]) {
      const node = der.parse(der.octetString(new Uint8Array(size)));
      expect(node.content.length).toBe(size);
    }
  });

  it("encodes object identifiers with multi-byte arcs", () => {
    expect(der.readObjectIdentifier(der.parse(der.objectIdentifier("1.2.840.113549.1.9.14")))).toBe(
      "1.2.840.113549.1.9.14",
    );
  });

  it("writes UTCTime before 2050 and GeneralizedTime from 2050", () => {
    expect(der.parse(der.time(new Date("2049-12-31T23:59:59Z"))).tag).toBe(der.TAG.UTC_TIME);
    expect(der.readTime(der.parse(der.time(new Date("2050-01-01T00:00:00Z"))))).toEqual(
      new Date("2050-01-01T00:00:00Z"),
    );
  });

  it("keeps integers positive and minimal", () => {
    expect(Array.from(der.unsignedInteger(Uint8Array.of(0, 0, 0x80)))).toEqual([0x02, 0x02, 0x00, 0x80]);
    expect(Array.from(der.unsignedInteger(Uint8Array.of(0, 0x7f)))).toEqual([0x02, 0x01, 0x7f]);
  });

  it("finds every PEM block of a label", () => {
    expect(pemBlocks(`${rsaCert}${otherEcCert}`, "CERTIFICATE")).toHaveLength(2);
  });
});

describe("name coverage", () => {
  it("covers exact names and one label under a wildcard", () => {
    expect(nameCovers("a.example.org", "a.example.org")).toBe(true);
    expect(nameCovers("*.example.org", "a.example.org")).toBe(true);
    expect(nameCovers("*.example.org", "b.a.example.org")).toBe(false);
    expect(nameCovers("*.example.org", "example.org")).toBe(false);
  });
});
