// What the HAProxy generator leaves out of stored data it would refuse now (params and addresses stored before they
// were vetted, or before a rule was added): the backend or the server, never only its params, which may be its access
// rules; the rest of the file is kept, and the preview lists the problems.
import { beforeAll, describe, expect, it } from "vitest";
import { parseIpv6Network } from "../../../src/proxy/installation/addresses";
import { generateHaproxyBundle } from "../../../src/proxy/haproxy/config";
import { certificate, createFallbackCertificate, fallback, installation, settings } from "./config-fixtures";

beforeAll(createFallbackCertificate);

const TOO_MUCH_SAMPLE_WORK =
  "more than 80000000 character tests a request in one backend for sample fetches and ACL matches (about 80 ms of " +
  "HAProxy's time; each evaluation costs: a header, cookie or URL parameter fetch 1048576, another fetch or a " +
  "converter 16384, each pattern 32768, and a -m sub, dir or dom pattern 16384 more per character; a named ACL " +
  "costs all its acl lines at each use): use each ACL in fewer conditions, give ACLs fewer patterns or acl lines, " +
  "match shorter substrings, or read headers and cookies in fewer places";

describe("params stored before they were vetted", () => {
  const clean = () => generateHaproxyBundle(installation(), [fallback], settings);
  /** The installation with alpha_10_api left out as a backend the load balancer refused. */
  const withoutApi = () => generateHaproxyBundle(installation(), [fallback], settings, new Map([[10, "refused"]]));

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
    [
      `http-request set-header X ${"%[hdr(x)]".repeat(77)}`,
      `params line 1 refused (http-request set-header: the value: "hdr": ${TOO_MUCH_SAMPLE_WORK})`,
    ],
  ])(
    "leaves out the backend with params %j, its domains answering 503, names it in the warnings and keeps the rest",
    (params, warning) => {
      const data = installation();
      data.backends[0].params = params;
      const bundle = generateHaproxyBundle(data, [fallback], settings);
      const expected = withoutApi();
      expect(bundle.files).toEqual(expected.files);
      expect(bundle.files["haproxy.cfg"]).not.toContain("backend alpha_10_api\n");
      expect(bundle.files["domain2backend.map"]).toContain("\na.alpha.example bk_unavailable\n");
      expect(bundle.warnings).toEqual([
        `WARN: backend alpha_10_api is left out: ${warning}; its domains answer 503`,
        ...clean().warnings,
      ]);
    },
  );

  it("leaves out a refused backend with a _maintenance line too", () => {
    const data = installation();
    data.backends[0].params = "_maintenance\nlisten evil";
    const bundle = generateHaproxyBundle(data, [fallback], settings);
    expect(bundle.files).toEqual(withoutApi().files);
    expect(bundle.warnings[0]).toBe(
      'WARN: backend alpha_10_api is left out: params line 2 refused ("listen" opens a new section); its domains answer 503',
    );
  });

  it("leaves out a server whose params are refused, which may have held its TLS options, and names it", () => {
    const data = installation();
    data.backendContainers[0].params = "check crt /etc/haproxy/certs/other.pem";
    data.backendContainers[1].params = "check\nbackend x";
    const bundle = generateHaproxyBundle(data, [fallback], settings);
    expect(bundle.files["haproxy.cfg"]).toBe(
      clean()
        .files["haproxy.cfg"].replace(
          "    server node1.example.net_alpha-web1 [2001:db8::101]:8080 check weight 10\n",
          "",
        )
        .replace("    server node2.example.net_alpha-web2 [2001:db8::102]:8080\n", ""),
    );
    expect(bundle.warnings).toEqual([
      'WARN: backend alpha_10_api: server node1.example.net_alpha-web1 is left out: its params line 1 refused ("crt" would read a file)',
      "WARN: backend alpha_10_api: server node2.example.net_alpha-web2 is left out: its params line 2 refused (server params must be one line)",
      ...clean().warnings,
    ]);
  });

  it("allows the installation's extra directives", () => {
    const data = installation();
    data.backends[0].params = "http-send-name-header X-Server";
    expect(generateHaproxyBundle(data, [fallback], settings).warnings[0]).toBe(
      'WARN: backend alpha_10_api is left out: params line 1 refused ("http-send-name-header" is not an allowed directive); its domains answer 503',
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
  it("names each backend left out for its params, a server, a server's params or a domain's certificate", () => {
    const data = installation();
    data.backends.find((backend) => backend.id === 20)!.params = "bogus-directive on";
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
        kind: "server-params",
        message:
          'backend alpha_10_api: server node1.example.net_alpha-web1 is left out: its params line 1 refused ("crt" would read a file)',
      },
      {
        project: "alpha",
        backend: "api",
        kind: "server-address",
        message:
          "backend alpha_10_api: server node2.example.net_alpha-web2 is left out: its address ::1 is a loopback address",
      },
      missing("alpha", "api", "a.alpha.example", "public CA", "alpha_10_api"),
      {
        project: "beta",
        backend: "shop",
        kind: "params",
        message:
          'backend beta_20_shop is left out: params line 1 refused ("bogus-directive" is not an allowed directive); its domains answer 503',
      },
      missing("beta", "shop", "shop.beta.example", "provided", "beta_20_shop"),
    ]);
    // Each is also a warning of the generation (issue 28: a certificate that never comes was heard of nowhere).
    const [serverParams, serverAddress, publicCa, params, provided] = bundle.problems.map(({ message }) => message);
    expect(bundle.warnings).toEqual([
      `WARN: ${serverParams}`,
      `WARN: ${serverAddress}`,
      `WARN: ${publicCa}`,
      "WARN: backend alpha_11_empty has no containers: its domains are not routed (gone.alpha.example)",
      "WARN: nourl.alpha.example (backend alpha_14_tempredirect) has no redirectToUrl and is not routed",
      `WARN: ${params}`,
      `WARN: ${provided}`,
    ]);
  });

  it("has no certificate problem once a certificate covers the domain", () => {
    const provided = certificate(3, "beta-shop", "provided", ["shop.beta.example"], "2035-01-01T00:00:00Z");
    const bundle = generateHaproxyBundle(installation(), [fallback, provided], settings);
    expect(bundle.problems.map((problem) => problem.message.split(" ")[0])).toEqual(["a.alpha.example"]);
  });
});
