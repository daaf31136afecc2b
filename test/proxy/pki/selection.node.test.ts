// Certificate selection (pure, plain Node): a provided certificate given for projects serves only their domains and
// is shipped only while it serves one; one given without projects serves every project's, as before (issue 27).
import { describe, expect, it } from "vitest";
import type { CertificateRow } from "../../../src/proxy/pki/rows";
import { certificateSummary, selectCertificates } from "../../../src/proxy/pki/selection";

const ALPHA = 1;
const BETA = 2;

function certificate(id: number, name: string, domainNames: string[], notAfter: string, projectIds: number[] | null) {
  const row: CertificateRow = {
    id,
    name,
    source: "provided",
    domainNames,
    issuer: "CN=test",
    serialNumber: "01",
    notBefore: new Date("2026-01-01T00:00:00Z"),
    notAfter: new Date(notAfter),
    certificatePem: "",
    privateKeyPem: "",
    projectIds,
    updatedAt: new Date("2026-01-01T00:00:00Z"),
  };
  return row;
}

const domain = (domainName: string, projectId: number) => ({
  domainName,
  projectId,
  publicCaCertificate: false,
  certProvided: true,
});
const projectOf = (d: { projectId: number }) => d.projectId;
const names = (selection: ReturnType<typeof selectCertificates>) => ({
  byDomain: Object.fromEntries([...selection.byDomain].map(([name, row]) => [name, row.name])),
  used: selection.used.map((row) => row.name),
});

describe("selectCertificates with projects", () => {
  const domains = [
    domain("beta-corp.example", BETA),
    domain("x.beta-corp.example", BETA),
    domain("login.beta-corp.example", ALPHA),
  ];

  it("serves a certificate without projects to every project's domains, as before", () => {
    const wildcard = certificate(1, "beta-wild", ["beta-corp.example", "*.beta-corp.example"], "2027-01-01", null);
    expect(names(selectCertificates([wildcard], domains, projectOf))).toEqual({
      byDomain: {
        "beta-corp.example": "beta-wild",
        "x.beta-corp.example": "beta-wild",
        "login.beta-corp.example": "beta-wild",
      },
      used: ["beta-wild"],
    });
  });

  it("serves a certificate given for a project to its domains only", () => {
    const wildcard = certificate(1, "beta-wild", ["beta-corp.example", "*.beta-corp.example"], "2027-01-01", [BETA]);
    expect(names(selectCertificates([wildcard], domains, projectOf))).toEqual({
      byDomain: { "beta-corp.example": "beta-wild", "x.beta-corp.example": "beta-wild" },
      used: ["beta-wild"],
    });
  });

  it("ships a certificate given for projects only while it serves one of their domains", () => {
    const wildcard = certificate(1, "beta-wild", ["*.beta-corp.example"], "2027-01-01", [BETA]);
    expect(names(selectCertificates([wildcard], [domain("login.beta-corp.example", ALPHA)], projectOf))).toEqual({
      byDomain: {},
      used: [],
    });
    // Without a way to name the domains' projects, it serves none.
    expect(names(selectCertificates([wildcard], domains))).toEqual({ byDomain: {}, used: [] });
  });

  it("lets another project's domain fall back to a certificate it may have, exact or wildcard", () => {
    const betaExact = certificate(1, "beta-login", ["login.beta-corp.example"], "2028-01-01", [BETA]);
    const open = certificate(2, "open-wild", ["*.beta-corp.example"], "2027-01-01", null);
    const later = certificate(3, "beta-later", ["*.beta-corp.example"], "2029-01-01", [BETA, 7]);
    expect(names(selectCertificates([betaExact, open, later], domains, projectOf))).toEqual({
      byDomain: { "x.beta-corp.example": "beta-later", "login.beta-corp.example": "open-wild" },
      used: ["beta-later", "open-wild"],
    });
  });
});

describe("certificateSummary", () => {
  it("names a certificate's projects by label, sorted, leaving out deleted ones; none without a list", () => {
    const labels = new Map([
      [ALPHA, "alpha"],
      [BETA, "beta"],
    ]);
    const restricted = certificate(1, "c", ["a.example"], "2027-01-01", [BETA, 99, ALPHA]);
    expect(certificateSummary(restricted, labels).projects).toEqual(["alpha", "beta"]);
    expect(certificateSummary({ ...restricted, projectIds: null }, labels)).not.toHaveProperty("projects");
  });
});
