// Which certificate the HAProxy generator picks for each domain (ACME, provided, the later end), the domains a
// certificate given for a project is offered for, and which certificates are shipped.
import { beforeAll, describe, expect, it } from "vitest";
import { generateHaproxyBundle } from "../../../src/proxy/haproxy/config";
import { certificate, createFallbackCertificate, fallback, installation, settings } from "./config-fixtures";

beforeAll(createFallbackCertificate);

describe("certificate selection", () => {
  it("prefers the ACME certificate for a public CA domain and the provided one for certProvided, else the later end", () => {
    const data = installation();
    const acme = certificate(2, "acme_a.alpha.example", "acme", ["a.alpha.example"], "2027-01-01T00:00:00Z");
    const providedLater = certificate(
      3,
      "late",
      "provided",
      ["a.alpha.example", "b.alpha.example"],
      "2030-01-01T00:00:00Z",
    );
    const providedEarlier = certificate(4, "early", "provided", ["b.alpha.example"], "2028-01-01T00:00:00Z");
    const bundle = generateHaproxyBundle(data, [fallback, providedEarlier, acme, providedLater], settings);
    expect(bundle.files["domain2cert.map"].split("\n").slice(1, -1)).toEqual([
      "a.alpha.example certs/acme_a.alpha.example.pem",
      "b.alpha.example certs/late.pem",
    ]);
    expect(bundle.files["crt-list.txt"].split("\n").slice(1, -1)).toEqual([
      "certs/acme_a.alpha.example.pem a.alpha.example",
      "certs/late.pem b.alpha.example",
    ]);
    // "early" serves no domain, so it is not shipped: the crt-list never names it.
    expect(bundle.certificates.map(({ row }) => row.name)).toEqual(["fallback", "acme_a.alpha.example", "late"]);
  });

  it("offers a certificate given for a project only for that project's domains, and ships one only while it serves", () => {
    const forAlpha = certificate(5, "alpha-wild", "provided", ["*.alpha.example"], "2030-01-01T00:00:00Z");
    forAlpha.projectIds = [2];
    // Given for beta, it covers alpha's names too, and one of beta's.
    const forBeta = certificate(
      6,
      "beta-wild",
      "provided",
      ["*.alpha.example", "*.beta.example"],
      "2031-01-01T00:00:00Z",
    );
    forBeta.projectIds = [1];
    // Without projects, it covers only names no domain holds: it serves nothing.
    const idle = certificate(7, "idle", "provided", ["*.nobody.example"], "2032-01-01T00:00:00Z");
    const bundle = generateHaproxyBundle(installation(), [fallback, idle, forBeta, forAlpha], settings);
    const alphaNames = "a.alpha.example b.alpha.example gone.alpha.example keep.alpha.example nothing.alpha.example";
    expect(bundle.files["crt-list.txt"].split("\n").slice(1, -1)).toEqual([
      `certs/alpha-wild.pem ${alphaNames} nourl.alpha.example old.alpha.example temp.alpha.example`,
      "certs/beta-wild.pem shop.beta.example",
    ]);
    expect(bundle.certificates.map(({ file }) => file)).toEqual([
      "fallback.pem",
      "certs/alpha-wild.pem",
      "certs/beta-wild.pem",
    ]);
  });
});
