// The crt-list of the https bind (pure, plain Node): each certificate with exactly the domains it serves as SNI
// filters, split into lines HAProxy reads, and the last check that refuses a line widening what a certificate answers.
import { describe, expect, it } from "vitest";
import { checkCrtList, crtListLines } from "../../../src/proxy/haproxy/crt-list";
import type { CertificateRow } from "../../../src/proxy/pki/rows";

function certificate(name: string, source: CertificateRow["source"] = "provided"): CertificateRow {
  return {
    id: 1,
    name,
    source,
    domainNames: [],
    issuer: "CN=test",
    serialNumber: "01",
    notBefore: new Date("2026-01-01T00:00:00Z"),
    notAfter: new Date("2027-01-01T00:00:00Z"),
    certificatePem: "",
    privateKeyPem: "",
    projectIds: null,
    updatedAt: new Date("2026-01-01T00:00:00Z"),
  };
}

describe("crtListLines", () => {
  it("names each certificate file once with its domains' exact names, by file then name", () => {
    const wildcard = certificate("beta-wild");
    const acme = certificate("acme_a.alpha.example", "acme");
    const certificateOf = new Map([
      ["x.beta-corp.example", wildcard],
      ["a.alpha.example", acme],
      ["beta-corp.example", wildcard],
    ]);
    expect(crtListLines(certificateOf)).toEqual([
      "certs/acme_a.alpha.example.pem a.alpha.example",
      "certs/beta-wild.pem beta-corp.example x.beta-corp.example",
    ]);
    expect(crtListLines(new Map())).toEqual([]);
  });

  it("splits a certificate's names into lines of at most 100 names and 32000 characters", () => {
    const wildcard = certificate("wild");
    const names = Array.from({ length: 250 }, (_, index) => `n${String(index).padStart(3, "0")}.example`);
    const lines = crtListLines(new Map(names.map((name) => [name, wildcard])));
    expect(lines.map((line) => line.split(" ").length - 1)).toEqual([100, 100, 50]);
    expect(lines.every((line) => line.startsWith("certs/wild.pem n"))).toBe(true);
    expect(lines.flatMap((line) => line.split(" ").slice(1))).toEqual(names);

    // Rows stored before names were bounded may be long: the line is split by length too.
    const long = Array.from(
      { length: 40 },
      (_, index) => `${"a".repeat(990)}.n${String(index).padStart(2, "0")}.example`,
    );
    const longLines = crtListLines(new Map(long.map((name) => [name, wildcard])));
    expect(longLines.map((line) => line.split(" ").length - 1)).toEqual([31, 9]);
    expect(Math.max(...longLines.map((line) => line.length))).toBeLessThanOrEqual(32_000);
  });
});

describe("checkCrtList", () => {
  const shipped = new Set(["fallback.pem", "certs/wild.pem"]);
  const header = "# certificate file, then the host names it is offered for (generated, DO NOT EDIT)\n";

  it("passes the lines the generator writes", () => {
    expect(() => checkCrtList(`${header}certs/wild.pem a.example b.example\n`, shipped)).not.toThrow();
    expect(() => checkCrtList(header, shipped)).not.toThrow();
  });

  it("refuses a line that would offer a certificate beyond its domains or load a file not shipped", () => {
    for (const line of [
      "certs/wild.pem",
      "certs/wild.pem *.example",
      "certs/wild.pem a.example !b.example",
      "certs/wild.pem [alpn h2] a.example",
      "certs/wild.pem a.example\tb.example",
      "certs/other.pem a.example",
      "/etc/ssl/private/key.pem a.example",
      `certs/wild.pem ${Array.from({ length: 101 }, (_, index) => `n${index}.example`).join(" ")}`,
      `certs/wild.pem ${"a".repeat(65_530)}.example`,
    ]) {
      expect(() => checkCrtList(`${header}${line}\n`, shipped)).toThrow(
        `crt-list.txt: malformed line ${JSON.stringify(line)}`,
      );
    }
  });
});
