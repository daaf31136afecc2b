// What the HAProxy generator leaves out of stored data it would refuse now (params and addresses stored before they
// were vetted), keeping the rest of the file, and the problems the preview lists for it.
import { beforeAll, describe, expect, it } from "vitest";
import { parseIpv6Network } from "../../../src/proxy/installation/addresses";
import { generateHaproxyBundle } from "../../../src/proxy/haproxy/config";
import { certificate, createFallbackCertificate, fallback, installation, settings } from "./config-fixtures";

beforeAll(createFallbackCertificate);

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
