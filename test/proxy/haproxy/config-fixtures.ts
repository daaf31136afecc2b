// The small installation the HAProxy generator tests render (two projects: redirects, prefixes, maintenance, a
// backend without containers) and the certificate rows they pair it with, the fallback among them.
import type { HaproxySettings } from "../../../src/proxy/haproxy/config";
import type { Installation } from "../../../src/proxy/installation/rows";
import type { CertificateRow } from "../../../src/proxy/pki/rows";
import { selfSignedCertificate } from "../../../src/proxy/pki/x509";

export const settings: HaproxySettings = {
  httpPort: 80,
  httpsPort: 443,
  bindAddress: "::",
  httpsRedirectCode: 301,
  acmeBackendUrl: "https://cp.example.net",
};

/** The fallback certificate, set by createFallbackCertificate. */
export let fallback: CertificateRow;
let pems: { certificatePem: string; privateKeyPem: string };

/** A certificate row carrying the pems createFallbackCertificate made. */
export function certificate(
  id: number,
  name: string,
  source: CertificateRow["source"],
  domainNames: string[],
  notAfter: string,
): CertificateRow {
  return {
    id,
    name,
    source,
    domainNames,
    issuer: "CN=test",
    serialNumber: "01",
    notBefore: new Date("2026-01-01T00:00:00Z"),
    notAfter: new Date(notAfter),
    updatedAt: new Date("2026-01-01T00:00:00Z"),
    projectIds: null,
    ...pems,
  };
}

/** Makes the pems every certificate row here carries, and the fallback certificate: a beforeAll of each file. */
export async function createFallbackCertificate() {
  pems = await selfSignedCertificate({
    commonName: "t.example",
    notBefore: new Date("2026-01-01"),
    notAfter: new Date("2036-01-01"),
  });
  fallback = certificate(1, "fallback", "fallback", ["fallback.invalid"], "2036-01-01T00:00:00Z");
}

const v = 0;
/** A fresh copy of the installation, for a test to change. */
export function installation(): Installation {
  return {
    projects: [
      { id: 2, label: "alpha", fullname: null, version: v, revision: 0 },
      { id: 1, label: "beta", fullname: null, version: v, revision: 0 },
    ],
    backends: [
      {
        id: 10,
        projectId: 2,
        label: "api",
        fullname: null,
        port: 8080,
        params: "balance roundrobin\n\n  option httpchk GET /health  ",
        version: v,
      },
      { id: 11, projectId: 2, label: "empty", fullname: null, port: 80, params: null, version: v },
      { id: 12, projectId: 2, label: "nocontent", fullname: null, port: 80, params: null, version: v },
      { id: 13, projectId: 2, label: "permredirect", fullname: null, port: 80, params: null, version: v },
      { id: 14, projectId: 2, label: "tempredirect", fullname: null, port: 80, params: null, version: v },
      {
        id: 20,
        projectId: 1,
        label: "shop",
        fullname: null,
        port: 80,
        params: "_maintenance\nbalance source",
        version: v,
      },
    ],
    domains: [
      {
        id: 1,
        domainName: "a.alpha.example",
        backendId: 10,
        publicCaCertificate: true,
        certProvided: false,
        redirectToUrl: null,
        version: v,
      },
      {
        id: 2,
        domainName: "b.alpha.example",
        backendId: 10,
        publicCaCertificate: false,
        certProvided: false,
        redirectToUrl: null,
        version: v,
      },
      {
        id: 3,
        domainName: "gone.alpha.example",
        backendId: 11,
        publicCaCertificate: false,
        certProvided: false,
        redirectToUrl: null,
        version: v,
      },
      {
        id: 4,
        domainName: "nothing.alpha.example",
        backendId: 12,
        publicCaCertificate: false,
        certProvided: false,
        redirectToUrl: null,
        version: v,
      },
      {
        id: 5,
        domainName: "old.alpha.example",
        backendId: 13,
        publicCaCertificate: false,
        certProvided: false,
        redirectToUrl: "https://new.example/landing",
        version: v,
      },
      {
        id: 6,
        domainName: "keep.alpha.example",
        backendId: 13,
        publicCaCertificate: false,
        certProvided: false,
        redirectToUrl: "https://new.example/kept/*",
        version: v,
      },
      {
        id: 7,
        domainName: "temp.alpha.example",
        backendId: 14,
        publicCaCertificate: false,
        certProvided: false,
        redirectToUrl: "http://tmp.example*",
        version: v,
      },
      {
        id: 8,
        domainName: "nourl.alpha.example",
        backendId: 14,
        publicCaCertificate: false,
        certProvided: false,
        redirectToUrl: null,
        version: v,
      },
      {
        id: 9,
        domainName: "shop.beta.example",
        backendId: 20,
        publicCaCertificate: false,
        certProvided: true,
        redirectToUrl: null,
        version: v,
      },
    ].sort((a, b) => (a.domainName < b.domainName ? -1 : 1)),
    backendContainers: [
      { id: 1, backendId: 10, containerId: 101, params: "check weight 10", version: v },
      { id: 2, backendId: 10, containerId: 102, params: null, version: v },
      { id: 3, backendId: 20, containerId: 201, params: null, version: v },
    ],
    containers: [
      { id: 101, projectId: 2, label: "web1", fullname: null, hostId: 1, ipv6: "2001:db8::101", version: v },
      { id: 102, projectId: 2, label: "web2", fullname: null, hostId: 2, ipv6: "2001:db8::102", version: v },
      { id: 201, projectId: 1, label: "shop1", fullname: null, hostId: 1, ipv6: "2001:db8::201", version: v },
    ],
    hosts: [
      { id: 1, hostname: "node1.example.net", ipv6: "2001:db8::1", version: v },
      { id: 2, hostname: "node2.example.net", ipv6: "2001:db8::2", version: v },
    ],
  };
}
