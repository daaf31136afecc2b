// When ACME certificates are renewed (pure, plain Node): the ARI certificate ID against RFC 9773's example, the CA's
// RenewalInfo read as untrusted input, Retry-After, the point drawn in a window, and the lifetime rules.
import { describe, expect, it } from "vitest";
import {
  acmeWarningPoint,
  ariCertificateId,
  nextPollAt,
  oneThirdLeft,
  readRenewalInfo,
  RenewalInfoError,
  renewalPoint,
  sameWindow,
} from "../../../src/proxy/pki/renewal";
import { readCertificatePem, selfSignedCertificate } from "../../../src/proxy/pki/x509";
import otherEcCert from "../fixtures/other-ec.cert.pem?raw";
import rfcExample from "../fixtures/rfc9773-example.cert.pem?raw";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const at = (iso: string) => new Date(iso);

describe("the ARI certificate ID", () => {
  it("is RFC 9773 Appendix A's for its example certificate (serial 0x87654321 takes a leading zero byte)", () => {
    const info = readCertificatePem(rfcExample);
    expect(Buffer.from(info.serialBytes).toString("hex")).toBe("0087654321");
    expect(Buffer.from(info.authorityKeyIdentifier!).toString("hex")).toBe("69885b6b87464041e1b37b847ba0ae2cde01c8d4");
    expect(ariCertificateId(info)).toBe("aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE");
  });

  it("is the same from the bytes of section 4.1's example", () => {
    expect(
      ariCertificateId({
        authorityKeyIdentifier: Uint8Array.from(Buffer.from("69885B6B87464041E1B37B847BA0AE2CDE01C8D4", "hex")),
        serialBytes: Uint8Array.of(0x00, 0x87, 0x65, 0x43, 0x21),
      }),
    ).toBe("aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE");
  });

  it("reads an openssl certificate's keyIdentifier and serial (as `openssl x509 -ext authorityKeyIdentifier -serial` shows them)", () => {
    // AKI 75:E3:6A:D9:F3:41:4A:AD:30:2F:26:7C:1C:6D:47:5A:0B:EA:FA:C0, serial 0EC4D02D7FC4676FBA09F860945EAC4AC292DA58
    expect(ariCertificateId(readCertificatePem(otherEcCert))).toBe(
      "deNq2fNBSq0wLyZ8HG1HWgvq-sA.DsTQLX_EZ2-6CfhglF6sSsKS2lg",
    );
  });

  it("is undefined for a certificate without an Authority Key Identifier, and names one built with it", async () => {
    const window = {
      commonName: "x.example",
      notBefore: at("2026-01-01T00:00:00Z"),
      notAfter: at("2026-04-01T00:00:00Z"),
    };
    expect(ariCertificateId(readCertificatePem((await selfSignedCertificate(window)).certificatePem))).toBeUndefined();
    const named = readCertificatePem(
      (await selfSignedCertificate({ ...window, authorityKeyIdentifier: Uint8Array.of(0xfb, 0xff, 0xbf) }))
        .certificatePem,
    );
    expect(ariCertificateId(named)).toBe(`-_-_.${Buffer.from(named.serialBytes).toString("base64url")}`);
  });
});

describe("reading the CA's RenewalInfo", () => {
  const certificate = { notAfter: at("2026-04-01T00:00:00Z") };
  const body = (value: unknown) => JSON.stringify(value);

  it("reads the window and an http(s) explanation URL", () => {
    expect(
      readRenewalInfo(
        body({
          suggestedWindow: { start: "2026-03-01T00:00:00Z", end: "2026-03-03T12:00:00.123456789+02:00" },
          explanationURL: "https://ca.example/incident/42",
          extra: "ignored",
        }),
        certificate,
      ),
    ).toEqual({
      start: at("2026-03-01T00:00:00Z"),
      end: at("2026-03-03T10:00:00.123Z"),
      explanationUrl: "https://ca.example/incident/42",
    });
  });

  it("drops an explanation URL that is not http(s) or too long, and keeps the window", () => {
    const window = { start: "2026-03-01T00:00:00Z", end: "2026-03-02T00:00:00Z" };
    for (const explanationURL of ["javascript:alert(1)", "not a url", 42, `https://ca.example/${"x".repeat(1000)}`])
      expect(readRenewalInfo(body({ suggestedWindow: window, explanationURL }), certificate)).toEqual({
        start: at(window.start),
        end: at(window.end),
      });
  });

  it("refuses what cannot be a window", () => {
    const refused = (text: string) => {
      try {
        readRenewalInfo(text, certificate);
      } catch (error) {
        expect(error).toBeInstanceOf(RenewalInfoError);
        return (error as Error).message;
      }
      return "accepted";
    };
    const window = (start: unknown, end: unknown) => body({ suggestedWindow: { start, end } });
    expect(refused("<html>")).toBe("the answer is not JSON");
    expect(refused("null")).toBe("the answer has no suggestedWindow");
    expect(refused(body({ suggestedWindow: "soon" }))).toBe("the answer has no suggestedWindow");
    expect(refused(window("2026-03-02T00:00:00Z", "2026-03-02T00:00:00Z"))).toBe(
      "suggestedWindow.end does not come after suggestedWindow.start",
    );
    expect(refused(window("2026-03-02T00:00:00Z", "2026-03-01T00:00:00Z"))).toBe(
      "suggestedWindow.end does not come after suggestedWindow.start",
    );
    expect(refused(window("2026-03-01T00:00:00Z", "2026-04-01T00:00:01Z"))).toBe(
      "suggestedWindow.end is after the certificate ends (2026-04-01T00:00:00.000Z)",
    );
    expect(refused(window("tomorrow", "2026-03-01T00:00:00Z"))).toBe("suggestedWindow.start is not an RFC 3339 time");
    expect(refused(window(1767225600000, "2026-03-01T00:00:00Z"))).toBe(
      "suggestedWindow.start is not an RFC 3339 time",
    );
    expect(refused(window("2026-02-30T99:00:00Z", "2026-03-01T00:00:00Z"))).toBe(
      "suggestedWindow.start is not a valid time",
    );
    expect(refused(window("2026-03-01T00:00:00Z", undefined))).toBe("suggestedWindow.end is not an RFC 3339 time");
    expect(refused(" ".repeat(16_385))).toBe("the answer is too long");
    // A window wholly in the past is the CA asking for a renewal now.
    expect(refused(window("2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z"))).toBe("accepted");
  });
});

describe("asking the CA again (Retry-After)", () => {
  const now = at("2026-03-01T12:00:00Z");
  const after = (header: string | null) => nextPollAt(header, now).getTime() - now.getTime();

  it("waits the seconds or until the HTTP date the CA gives, bounded to a minute and a day", () => {
    expect(after("21600")).toBe(6 * HOUR);
    expect(after("Sun, 01 Mar 2026 15:00:00 GMT")).toBe(3 * HOUR);
    expect(after("0")).toBe(60_000);
    expect(after("5")).toBe(60_000);
    expect(after("Sun, 01 Mar 2026 11:00:00 GMT")).toBe(60_000);
    expect(after("999999999")).toBe(DAY);
    expect(after("Fri, 01 Jan 2100 00:00:00 GMT")).toBe(DAY);
  });

  it("waits 6 hours without a Retry-After or with one that does not read", () => {
    for (const header of [null, "", "soon", "-5", "1.5", "12345678901"]) expect(after(header)).toBe(6 * HOUR);
  });
});

describe("the renewal point", () => {
  const window = { start: at("2026-03-01T00:00:00Z"), end: at("2026-03-04T00:00:00Z") };

  it("is drawn uniformly in the window less its last day, so that a daily run still falls inside", () => {
    expect(renewalPoint(window, 0)).toEqual(at("2026-03-01T00:00:00Z"));
    expect(renewalPoint(window, 0.5)).toEqual(at("2026-03-02T00:00:00Z"));
    expect(renewalPoint(window, 0.75)).toEqual(at("2026-03-02T12:00:00Z"));
    expect(renewalPoint(window, 0.999_999_999_9)).toEqual(new Date(at("2026-03-03T00:00:00Z").getTime() - 1));
  });

  it("is the start of a window no longer than a day", () => {
    const short = { start: at("2026-03-01T00:00:00Z"), end: at("2026-03-01T06:00:00Z") };
    expect(renewalPoint(short, 0.9)).toEqual(short.start);
    expect(renewalPoint({ start: short.start, end: at("2026-03-02T00:00:00Z") }, 0.9)).toEqual(short.start);
  });

  it("stands while the CA keeps the window", () => {
    expect(sameWindow(window, { start: at("2026-03-01T00:00:00Z"), end: at("2026-03-04T00:00:00Z") })).toBe(true);
    expect(sameWindow(window, { start: at("2026-03-01T00:00:00Z"), end: at("2026-03-03T00:00:00Z") })).toBe(false);
  });
});

describe("without a window", () => {
  it("renews when a third of the lifetime remains: 30 days of 90, 2 days of 6", () => {
    const notBefore = at("2026-01-01T00:00:00Z");
    expect(oneThirdLeft({ notBefore, notAfter: new Date(notBefore.getTime() + 90 * DAY) })).toEqual(
      at("2026-03-02T00:00:00Z"),
    );
    expect(oneThirdLeft({ notBefore, notAfter: new Date(notBefore.getTime() + 6 * DAY) })).toEqual(
      at("2026-01-05T00:00:00Z"),
    );
    expect(oneThirdLeft({ notBefore, notAfter: new Date(notBefore.getTime() + 47 * DAY) })).toEqual(
      new Date(notBefore.getTime() + (47 * DAY * 2) / 3),
    );
  });

  it("names an ACME certificate CERT_WARN_DAYS before its end, or when a sixth of its lifetime remains if later", () => {
    const notBefore = at("2026-01-01T00:00:00Z");
    const ending = (days: number) => ({ notBefore, notAfter: new Date(notBefore.getTime() + days * DAY) });
    expect(acmeWarningPoint(ending(90), 14)).toEqual(new Date(ending(90).notAfter.getTime() - 14 * DAY));
    expect(acmeWarningPoint(ending(6), 14)).toEqual(new Date(ending(6).notAfter.getTime() - DAY));
    expect(acmeWarningPoint(ending(47), 14)).toEqual(new Date(ending(47).notAfter.getTime() - (47 * DAY) / 6));
  });
});
