// The HAProxy generator on its own: the exact files for a small installation, determinism, redirects and prefixes,
// maintenance, skipped backends, the structural checks, and which certificate serves which domain.
import { beforeAll, describe, expect, it } from "vitest";
import { parseIpv6Network } from "../../../src/proxy/installation/addresses";
import type { CertificateRow } from "../../../src/proxy/pki/rows";
import {
  bundleDigest,
  bundleFiles,
  generateHaproxyBundle,
  type HaproxySettings,
} from "../../../src/proxy/haproxy/config";
import type { Installation } from "../../../src/proxy/installation/rows";
import { selfSignedCertificate } from "../../../src/proxy/pki/x509";

const settings: HaproxySettings = {
  httpPort: 80,
  httpsPort: 443,
  bindAddress: "::",
  httpsRedirectCode: 301,
  acmeBackendUrl: "https://cp.example.net",
};

let fallback: CertificateRow;
let pems: { certificatePem: string; privateKeyPem: string };

function certificate(
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

beforeAll(async () => {
  pems = await selfSignedCertificate({
    commonName: "t.example",
    notBefore: new Date("2026-01-01"),
    notAfter: new Date("2036-01-01"),
  });
  fallback = certificate(1, "fallback", "fallback", ["fallback.invalid"], "2036-01-01T00:00:00Z");
});

const v = 0;
function installation(): Installation {
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

describe("the generated files", () => {
  it("routes every domain through the maps and writes one backend per backend with containers", () => {
    const certificates = [
      fallback,
      certificate(2, "acme_a.alpha.example", "acme", ["a.alpha.example"], "2027-01-01T00:00:00Z"),
      certificate(3, "beta-wildcard", "provided", ["*.beta.example"], "2027-06-01T00:00:00Z"),
    ];
    const bundle = generateHaproxyBundle(installation(), certificates, settings);
    expect(bundle.files["domain2backend.map"]).toBe(
      [
        "# host name -> backend (generated, DO NOT EDIT)",
        "# alpha: api",
        "a.alpha.example alpha_10_api",
        "b.alpha.example alpha_10_api",
        "# alpha: nocontent",
        "nothing.alpha.example nocontent",
        "# alpha: permredirect",
        "keep.alpha.example permprefix",
        "old.alpha.example permredirect",
        "# alpha: tempredirect",
        "temp.alpha.example tempprefix",
        "# beta: shop",
        "shop.beta.example beta_20_shop",
        "",
      ].join("\n"),
    );
    expect(bundle.files["domain2redirect.map"]).toBe(
      "# host name -> redirect URL (generated, DO NOT EDIT)\nold.alpha.example https://new.example/landing\n",
    );
    expect(bundle.files["domain2prefix.map"]).toBe(
      "# host name -> redirect prefix (generated, DO NOT EDIT)\nkeep.alpha.example https://new.example/kept\ntemp.alpha.example http://tmp.example\n",
    );
    expect(bundle.files["domain2cert.map"]).toBe(
      "# host name -> certificate file (https redirect) (generated, DO NOT EDIT)\n" +
        "a.alpha.example certs/acme_a.alpha.example.pem\nshop.beta.example certs/beta-wildcard.pem\n",
    );
    // The https bind offers each certificate only for these names, never for the others it covers.
    expect(bundle.files["crt-list.txt"]).toBe(
      "# certificate file, then the host names it is offered for (generated, DO NOT EDIT)\n" +
        "certs/acme_a.alpha.example.pem a.alpha.example\ncerts/beta-wildcard.pem shop.beta.example\n",
    );
    expect(Object.keys(bundle.files)).toEqual([
      "haproxy.cfg",
      "domain2backend.map",
      "domain2redirect.map",
      "domain2prefix.map",
      "domain2cert.map",
      "crt-list.txt",
    ]);
    const config = bundle.files["haproxy.cfg"];
    expect(config.startsWith("# Generated by the proxy configuration API (/admin/gensynchaprx). DO NOT EDIT")).toBe(
      true,
    );
    expect(config).toContain(
      [
        "# project alpha: backend api",
        "backend alpha_10_api",
        "    balance roundrobin",
        "    option httpchk GET /health",
        "    server node1.example.net_alpha-web1 [2001:db8::101]:8080 check weight 10",
        "    server node2.example.net_alpha-web2 [2001:db8::102]:8080",
        "",
        "# project beta: backend shop",
        "backend beta_20_shop",
        "    # _maintenance: every request gets the maintenance page",
        '    http-request return status 503 content-type "text/html; charset=utf-8" string "<!DOCTYPE html>',
      ].join("\n"),
    );
    expect(config).not.toContain("balance source");
    expect(config).not.toContain("shop1");
    expect(config).not.toMatch(/backend \S*empty/);
    expect(config).toContain(
      [
        "frontend http-in",
        "    bind [::]:80 v4v6",
        "    http-request set-var(txn.host) req.hdr(host),field(1,:),lower",
        "    acl acme_challenge path_beg /.well-known/acme-challenge/",
        // A client's own X-Forwarded-Proto never reaches a server on plain http either.
        "    http-request set-header X-Forwarded-Proto http",
        "    acl has_certificate var(txn.host),map(domain2cert.map) -m found",
        "    http-request redirect location https://%[var(txn.host)]%[pathq] code 301 if !acme_challenge has_certificate",
        "    http-request set-var(txn.backend) var(txn.host),map(domain2backend.map,bk_default)",
        "    use_backend acme-challenge if acme_challenge",
        "    use_backend %[var(txn.backend)]",
        "    default_backend bk_default",
      ].join("\n"),
    );
    expect(config).toContain("    bind [::]:443 v4v6 ssl crt fallback.pem crt-list crt-list.txt alpn h2,http/1.1\n");
    expect(config).toContain(
      "backend acme-challenge\n    # HTTP-01 challenges are answered by the control plane\n    http-request set-header Host cp.example.net\n" +
        "    server control-plane cp.example.net:443 ssl verify required ca-file @system-ca sni str(cp.example.net) init-addr last,libc,none\n",
    );
    for (const global of ["nocontent", "permredirect", "tempredirect", "permprefix", "tempprefix", "bk_default"]) {
      expect(config).toContain(`\nbackend ${global}\n`);
    }
    expect(config).toContain(
      "backend permprefix\n    http-request redirect prefix %[var(txn.host),map(domain2prefix.map)] code 301\n",
    );
    expect(config).toContain(
      "backend tempredirect\n    http-request redirect location %[var(txn.host),map(domain2redirect.map)] code 302\n",
    );
    expect(bundle.warnings).toEqual([
      "WARN: backend alpha_11_empty has no containers: its domains are not routed (gone.alpha.example)",
      "WARN: nourl.alpha.example (backend alpha_14_tempredirect) has no redirectToUrl and is not routed",
    ]);
    expect(bundle.certificates.map(({ file, row }) => [file, row.name])).toEqual([
      ["fallback.pem", "fallback"],
      ["certs/acme_a.alpha.example.pem", "acme_a.alpha.example"],
      ["certs/beta-wildcard.pem", "beta-wildcard"],
    ]);
  });

  it("gives the same bytes for the same data, and a different digest when anything changes", async () => {
    const first = bundleFiles(generateHaproxyBundle(installation(), [fallback], settings));
    const second = bundleFiles(generateHaproxyBundle(installation(), [fallback], settings));
    expect(second).toEqual(first);
    expect(await bundleDigest(second)).toBe(await bundleDigest(first));
    const changed = installation();
    changed.backends[0].port = 8081;
    expect(await bundleDigest(bundleFiles(generateHaproxyBundle(changed, [fallback], settings)))).not.toBe(
      await bundleDigest(first),
    );
  });

  it("uses the configured ports, bind address and redirect code, and no ACME server when none is set", () => {
    const config = generateHaproxyBundle(installation(), [fallback], {
      httpPort: 18080,
      httpsPort: 18443,
      bindAddress: "127.0.0.1",
      httpsRedirectCode: 302,
    }).files["haproxy.cfg"];
    expect(config).toContain("    bind 127.0.0.1:18080\n");
    expect(config).toContain("    bind 127.0.0.1:18443 ssl crt fallback.pem crt-list crt-list.txt alpn h2,http/1.1\n");
    expect(config).toContain(
      "redirect location https://%[var(txn.host)]:18443%[pathq] code 302 if !acme_challenge has_certificate",
    );
    expect(config).toContain(
      "backend acme-challenge\n    # HTTP-01 challenges are answered by the control plane\n    http-request return status 503",
    );
    expect(
      generateHaproxyBundle(installation(), [fallback], {
        ...settings,
        bindAddress: "::1",
        acmeBackendUrl: "http://[::1]:8787",
      }).files["haproxy.cfg"],
    ).toContain("    bind [::1]:80\n");
  });

  it("forwards challenges to a plain-http control plane without TLS options", () => {
    const config = generateHaproxyBundle(installation(), [fallback], {
      ...settings,
      acmeBackendUrl: "http://127.0.0.1:8787",
    }).files["haproxy.cfg"];
    expect(config).toContain(
      "    http-request set-header Host 127.0.0.1:8787\n    server control-plane 127.0.0.1:8787 init-addr last,libc,none\n",
    );
  });
});

describe("params stored before they were vetted", () => {
  const clean = () => generateHaproxyBundle(installation(), [fallback], settings);
  /** The backend alpha_10_api as the clean installation renders it, without its two params lines. */
  const withoutParams = (config: string) =>
    config.replace("    balance roundrobin\n    option httpchk GET /health\n", "");

  it.each([
    ["balance roundrobin\nfrontend evil", 'params line 2 refused ("frontend" opens a new section)'],
    ['balance roundrobin\n"program" x\ncommand /bin/sh', 'params line 2 refused ("program" opens a new section)'],
    [
      'http-request set-header X "${SECRET}"',
      "params line 1 refused (environment expansion (${NAME} or $NAME) is not allowed)",
    ],
    [
      "http-request return status 200 content-type text/plain file certs/other.pem",
      'params line 1 refused ("file" would read a file)',
    ],
    [
      "_userauth admins",
      'params line 1 refused ("_userauth" is not a supported pseudo-directive (only _maintenance is))',
    ],
    ["balance\u0000roundrobin", "params line 1 refused (contains a control character)"],
    ["bogus-directive on", 'params line 1 refused ("bogus-directive" is not an allowed directive)'],
  ])(
    "writes the backend without params %j, names it in the warnings and keeps the rest of the file",
    (params, warning) => {
      const data = installation();
      data.backends[0].params = params;
      const bundle = generateHaproxyBundle(data, [fallback], settings);
      const expected = clean();
      expect(bundle.files["haproxy.cfg"]).toBe(withoutParams(expected.files["haproxy.cfg"]));
      expect(bundle.files["haproxy.cfg"]).toContain(
        "backend alpha_10_api\n    server node1.example.net_alpha-web1 [2001:db8::101]:8080 check weight 10\n    server node2.example.net_alpha-web2 [2001:db8::102]:8080\n",
      );
      for (const name of Object.keys(expected.files))
        if (name !== "haproxy.cfg") expect(bundle.files[name]).toBe(expected.files[name]);
      expect(bundle.warnings).toEqual([
        `WARN: backend alpha_10_api: ${warning}; the backend is written without its params`,
        ...expected.warnings,
      ]);
    },
  );

  it("keeps a refused backend in maintenance when it has a _maintenance line", () => {
    const data = installation();
    data.backends[0].params = "_maintenance\nlisten evil";
    const bundle = generateHaproxyBundle(data, [fallback], settings);
    expect(bundle.files["haproxy.cfg"]).toContain(
      "backend alpha_10_api\n    # _maintenance: every request gets the maintenance page\n    http-request return status 503",
    );
    expect(bundle.files["haproxy.cfg"]).not.toContain("listen evil");
    expect(bundle.warnings[0]).toBe(
      'WARN: backend alpha_10_api: params line 2 refused ("listen" opens a new section); the backend is written without its params',
    );
  });

  it("writes a server without its refused params and names it in the warnings", () => {
    const data = installation();
    data.backendContainers[0].params = "check crt /etc/haproxy/certs/other.pem";
    data.backendContainers[1].params = "check\nbackend x";
    const bundle = generateHaproxyBundle(data, [fallback], settings);
    expect(bundle.files["haproxy.cfg"]).toBe(
      clean().files["haproxy.cfg"].replace("[2001:db8::101]:8080 check weight 10\n", "[2001:db8::101]:8080\n"),
    );
    expect(bundle.warnings).toEqual([
      'WARN: backend alpha_10_api: params of server node1.example.net_alpha-web1 line 1 refused ("crt" would read a file); the server is written without them',
      "WARN: backend alpha_10_api: params of server node2.example.net_alpha-web2 line 2 refused (server params must be one line); the server is written without them",
      ...clean().warnings,
    ]);
  });

  it("allows the installation's extra directives", () => {
    const data = installation();
    data.backends[0].params = "http-send-name-header X-Server";
    expect(generateHaproxyBundle(data, [fallback], settings).warnings[0]).toBe(
      'WARN: backend alpha_10_api: params line 1 refused ("http-send-name-header" is not an allowed directive); the backend is written without its params',
    );
    const bundle = generateHaproxyBundle(data, [fallback], {
      ...settings,
      paramsExtraDirectives: ["http-send-name-header"],
    });
    expect(bundle.files["haproxy.cfg"]).toContain(
      "backend alpha_10_api\n    http-send-name-header X-Server\n    server ",
    );
    expect(bundle.warnings).toEqual(clean().warnings);
  });
});

describe("addresses stored before they were vetted", () => {
  it.each([
    ["10.0.0.1", "must be an IPv6 address"],
    ["::1", "is a loopback address"],
    [
      "::ffff:169.254.169.254",
      "embeds 169.254.169.254, which is a link-local address (cloud metadata services live there)",
    ],
  ])("leaves out the server at %s, names it in the warnings and keeps the rest of the file", (ipv6, reason) => {
    const data = installation();
    data.containers[0].ipv6 = ipv6;
    const bundle = generateHaproxyBundle(data, [fallback], settings);
    const clean = generateHaproxyBundle(installation(), [fallback], settings);
    expect(bundle.files["haproxy.cfg"]).toBe(
      clean.files["haproxy.cfg"].replace(
        "    server node1.example.net_alpha-web1 [2001:db8::101]:8080 check weight 10\n",
        "",
      ),
    );
    expect(bundle.warnings).toEqual([
      `WARN: backend alpha_10_api: server node1.example.net_alpha-web1 is left out: its address ${ipv6} ${reason}`,
      ...clean.warnings,
    ]);
  });

  it("writes a refused address the installation lists among its exceptions, in canonical form", () => {
    const data = installation();
    data.containers[0].ipv6 = "::FFFF:127.0.0.2";
    const bundle = generateHaproxyBundle(data, [fallback], {
      ...settings,
      addressExceptions: [parseIpv6Network("::ffff:127.0.0.0/104")!],
    });
    expect(bundle.files["haproxy.cfg"]).toContain(
      "    server node1.example.net_alpha-web1 [::ffff:7f00:2]:8080 check weight 10\n",
    );
  });
});

describe("problems (what the preview lists)", () => {
  it("names each backend written without its params, a server, a server's params or a domain's certificate", () => {
    const data = installation();
    data.backends[0].params = "bogus-directive on";
    data.backendContainers[0].params = "check crt x.pem";
    data.containers[1].ipv6 = "::1";
    const bundle = generateHaproxyBundle(data, [fallback], settings);
    const missing = (project: string, backend: string, domain: string, kind: string, where: string) => ({
      project,
      backend,
      kind: "certificate",
      message: `${domain} (backend ${where}) asks for a ${kind} certificate, but none covers it: it is served over http only`,
    });
    expect(bundle.problems).toEqual([
      {
        project: "alpha",
        backend: "api",
        kind: "params",
        message:
          'backend alpha_10_api: params line 1 refused ("bogus-directive" is not an allowed directive); the backend is written without its params',
      },
      {
        project: "alpha",
        backend: "api",
        kind: "server-params",
        message:
          'backend alpha_10_api: params of server node1.example.net_alpha-web1 line 1 refused ("crt" would read a file); the server is written without them',
      },
      {
        project: "alpha",
        backend: "api",
        kind: "server-address",
        message:
          "backend alpha_10_api: server node2.example.net_alpha-web2 is left out: its address ::1 is a loopback address",
      },
      missing("alpha", "api", "a.alpha.example", "public CA", "alpha_10_api"),
      missing("beta", "shop", "shop.beta.example", "provided", "beta_20_shop"),
    ]);
    // Each is also a warning of the generation (issue 28: a certificate that never comes was heard of nowhere).
    const [params, serverParams, serverAddress, publicCa, provided] = bundle.problems.map(({ message }) => message);
    expect(bundle.warnings).toEqual([
      `WARN: ${params}`,
      `WARN: ${serverParams}`,
      `WARN: ${serverAddress}`,
      `WARN: ${publicCa}`,
      "WARN: backend alpha_11_empty has no containers: its domains are not routed (gone.alpha.example)",
      "WARN: nourl.alpha.example (backend alpha_14_tempredirect) has no redirectToUrl and is not routed",
      `WARN: ${provided}`,
    ]);
  });

  it("has no certificate problem once a certificate covers the domain", () => {
    const provided = certificate(3, "beta-shop", "provided", ["shop.beta.example"], "2035-01-01T00:00:00Z");
    const bundle = generateHaproxyBundle(installation(), [fallback, provided], settings);
    expect(bundle.problems.map((problem) => problem.message.split(" ")[0])).toEqual(["a.alpha.example"]);
  });
});

describe("structural checks", () => {
  it("refuses bad redirect URLs", () => {
    const badUrl = installation();
    badUrl.domains.find((d) => d.domainName === "old.alpha.example")!.redirectToUrl = "https://new.example/a b";
    expect(() => generateHaproxyBundle(badUrl, [fallback], settings)).toThrow(
      "old.alpha.example: invalid redirect URL https://new.example/a b",
    );
  });

  it("needs the fallback certificate", () => {
    expect(() => generateHaproxyBundle(installation(), [], settings)).toThrow("the fallback certificate is missing");
  });
});

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
