// HAProxy params vetted when stored: each attack of the pentest, posted by a tenant (an API user granted one project),
// is answered 400 naming the field, line and reason, and nothing is stored; server params of container links too; the
// attacks of issue 27 (response splitting, lines haproxy -c would refuse); the installation's extra directives; and
// rows stored before the vetting neither break gensynchaprx nor get copied on.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { ADMIN_AUTH, as, asAdmin, createApiUser, createBackend, errorBody, expectJson } from "../../support/proxy-api";
import { createProjectOnHost, createProjectWithContainers } from "../../support/proxy-fixtures";

let tenant: string;
let web1: number;
let web2: number;

const post = (body: unknown) => as(tenant, "/backends/pt", "POST", body);
const project = async () => expectJson(as(tenant, "/projects/pt"), 200);
const counts = async () =>
  env.DB.prepare(
    "select (select count(*) from backends) as backends, (select count(*) from backend_containers) as refs, (select max(version) from backends) as version",
  ).first();

/** One backend's section of haproxy.cfg: from its comment line to the blank line before the next, or the end. */
const sectionOf = (config: string, header: string) => {
  const start = config.indexOf(header);
  const end = config.indexOf("\n# ", start + header.length);
  return config.slice(start, end < 0 ? undefined : end);
};

/** The Worker with settings overridden (a fresh env object, so the settings are read again). */
async function callWith(
  vars: Record<string, string>,
  path: string,
  method = "GET",
  body?: unknown,
  auth = tenant,
): Promise<Response> {
  const workerEnv = { ...env, HAPROXY_AGENT_URL: "", SLAVE_AGENT_URLS: "", ...vars } as unknown as Env;
  const headers: Record<string, string> = {
    Authorization: auth,
    ...(body === undefined ? {} : { "content-type": "application/json" }),
  };
  const request = new Request(`http://example.com${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return worker.fetch(request, workerEnv, createExecutionContext());
}

beforeAll(async () => {
  ({ web1, web2 } = await createProjectOnHost("pt", {
    hostname: "node1.example.net",
    ipv6: "2001:db8::1",
    containers: { web1: "2001:db8::21", web2: "2001:db8::22" },
  }));
  await createBackend("pt", {
    label: "web",
    port: 8080,
    params: "balance roundrobin",
    backendContainers: [{ containerId: web1, params: "check" }],
    domainForwardings: [{ domainName: "www.pt.example" }],
  });
  tenant = await createApiUser("tenantuser", ["pt"]);
});

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
});

afterEach(() => vi.restoreAllMocks());

describe("backend params", () => {
  it.each([
    [
      "a quoted section keyword",
      'balance roundrobin\n"program" pwn\ncommand /bin/sh -c id',
      'params line 2: "program" opens a new section',
    ],
    ["a single-quoted section keyword", "'frontend' pwn\nbind :9999", 'params line 1: "frontend" opens a new section'],
    ["a section keyword written with a hex escape", "\\x70rogram pwn", 'params line 1: "program" opens a new section'],
    ["a section keyword spliced from quotes", 'glo"bal"', 'params line 1: "global" opens a new section'],
    ["a backslash-escaped keyword", "\\program pwn", 'params line 1: "\\\\program" is not an allowed directive'],
    [
      "environment expansion in double quotes",
      'http-request set-header X-Leak "${PROXY_ADMIN_PASSWORD}"',
      "params line 1: environment expansion (${NAME} or $NAME) is not allowed",
    ],
    [
      "$NAME expansion",
      'http-request set-header X-Leak "$PROXY_ADMIN_PASSWORD"',
      "params line 1: environment expansion (${NAME} or $NAME) is not allowed",
    ],
    [
      "another tenant's key through http-request return file",
      "http-request return status 200 content-type text/plain file certs/victim.example.pem",
      'params line 1: "file" would read a file',
    ],
    [
      "a file through lf-file",
      "http-request return status 200 content-type text/plain lf-file /etc/passwd",
      'params line 1: "lf-file" would read a file',
    ],
    ["a file through errorfile", "errorfile 503 fallback.pem", 'params line 1: "errorfile" would read a file'],
    [
      "a file through http-error",
      "http-error status 500 file certs/victim.example.pem",
      'params line 1: "file" would read a file',
    ],
    ["ACL patterns from a file", "acl x path_beg -f /etc/passwd", 'params line 1: "-f" would read a file'],
    [
      "a map converter on a file",
      'http-request set-header X "%[req.hdr(host),map(/etc/passwd)]"',
      'params line 1: http-request set-header: the value: "map" is not an allowed converter',
    ],
    [
      "the env() fetch",
      "http-request set-header X %[env(PROXY_ADMIN_PASSWORD)]",
      'params line 1: http-request set-header: the value: "env" is not an allowed sample fetch',
    ],
    [
      "a conditional block",
      "balance roundrobin\n.if defined(HOME)",
      'params line 2: ".if" is a configuration-parser directive (.if, .notice...) and not allowed',
    ],
    ["a server of its own", "server pwn 169.254.169.254:80", 'params line 1: "server" is not an allowed directive'],
    [
      "a directive haproxy refuses",
      "bogus-directive on",
      'params line 1: "bogus-directive" is not an allowed directive',
    ],
    [
      "a trailing backslash",
      "balance roundrobin \\",
      "params line 1: a trailing backslash is not a line continuation in HAProxy",
    ],
    ["a control character", "balance\u0007roundrobin", "params line 1: contains a control character"],
  ])("refuses %s with 400 and changes nothing", async (_what, params, message) => {
    const before = await project();
    const rows = await counts();
    expect(await expectJson(post({ label: "web", port: 9090, params }), 400)).toEqual(errorBody(message));
    expect(await expectJson(post({ label: "newone", params }), 400)).toEqual(errorBody(message));
    expect(await project()).toEqual(before);
    expect(await counts()).toEqual(rows);
  });

  it("stores tuning as written", async () => {
    const params =
      "balance leastconn\noption httpchk GET /health\nhttp-check expect status 200\nhttp-request set-header X-Forwarded-Port %[dst_port]";
    await expectJson(post({ label: "web", params }), 200);
    expect((await project()).backends.find((b: { label: string }) => b.label === "web").params).toBe(params);
    await expectJson(post({ label: "web", params: "balance roundrobin" }), 200);
  });
});

describe("server params of container links", () => {
  it.each([
    [
      "a client certificate file",
      "ssl verify none crt /etc/haproxy/certs/victim.example.pem",
      'backendContainers[1].params line 1: "crt" would read a file',
    ],
    [
      "a CA file",
      "ssl verify required ca-file /etc/ssl/private/victim.pem",
      'backendContainers[1].params line 1: "ca-file" would read a file',
    ],
    [
      "a CRL file",
      "ssl verify none crl-file /etc/x",
      'backendContainers[1].params line 1: "crl-file" would read a file',
    ],
    [
      "checks sent to another address",
      "check addr 169.254.169.254 port 80",
      'backendContainers[1].params line 1: "addr" is not an allowed server option',
    ],
    ["a second line", "check\nbackend pwn", "backendContainers[1].params line 2: server params must be one line"],
    [
      "environment expansion",
      'check agent-check agent-port 1 agent-send "${PROXY_ADMIN_PASSWORD}"',
      "backendContainers[1].params line 1: environment expansion (${NAME} or $NAME) is not allowed",
    ],
  ])("refuses %s with 400 and changes nothing", async (_what, params, message) => {
    const before = await project();
    const rows = await counts();
    const body = {
      label: "web",
      backendContainers: [
        { containerId: web1, params: "check" },
        { containerId: web2, params },
      ],
    };
    expect(await expectJson(post(body), 400)).toEqual(errorBody(message));
    expect(await project()).toEqual(before);
    expect(await counts()).toEqual(rows);
  });

  it("stores allowed server options as written", async () => {
    const params = "check inter 2s rise 2 fall 3 ssl verify required ca-file @system-ca verifyhost api.example.org";
    await expectJson(
      post({
        label: "web",
        backendContainers: [
          { containerId: web1, params: "check" },
          { containerId: web2, params },
        ],
      }),
      200,
    );
    const links = (await project()).backends.find((b: { label: string }) => b.label === "web").backendContainers;
    expect(links.map((link: { params?: string }) => link.params)).toEqual(["check", params]);
    await expectJson(post({ label: "web", backendContainers: [{ containerId: web1, params: "check" }] }), 200);
  });
});

describe("issue 27: params that split responses or that haproxy -c would refuse", () => {
  const words = (count: number) => `acl a path_beg ${Array.from({ length: count - 3 }, (_, i) => `/p${i}`).join(" ")}`;
  const check = 'HAProxy\'s "backend tcp-check rule"';

  it.each([
    [
      "a reply header named agent-send carrying a second response",
      'http-request return status 200 content-type text/plain hdr agent-send "a\\r\\nContent-Length: 0\\r\\n\\r\\nHTTP/1.1 200 OK"',
      'params line 1: "a\\r\\nContent-Length: 0\\r\\n\\r\\nHTTP/1.1 200 OK" contains a control character',
    ],
    [
      "a request header named agent-send carrying a second header",
      'http-request set-header agent-send "a\\r\\nX-Injected: 1"',
      'params line 1: "a\\r\\nX-Injected: 1" contains a control character',
    ],
    [
      "CR LF in tcp-check data",
      'option tcp-check\ntcp-check send "PING\\r\\n"',
      'params line 2: "PING\\r\\n" contains a control character',
    ],
    ["65 words", `${words(65)} # paths`, "params line 1: more than 64 words (HAProxy's limit)"],
    [
      "%[int(x)]",
      "http-request set-header X %[int(x)]",
      'params line 1: http-request set-header: the value: argument 1 of "int" must be an integer, not "x"',
    ],
    [
      "%[ipv4(x)]",
      "http-request set-header X %[ipv4(x)]",
      'params line 1: http-request set-header: the value: argument 1 of "ipv4" must be an IPv4 address, not "x"',
    ],
    [
      "%[hdr(a,b,c)]",
      "http-request set-header X %[hdr(a,b,c)]",
      'params line 1: http-request set-header: the value: "hdr" takes at most 2 arguments, not 3',
    ],
    [
      "%[var(txn.x,a,b)]",
      "http-request set-header X %[var(txn.x,a,b)]",
      'params line 1: http-request set-header: the value: "var" takes at most 2 arguments, not 3',
    ],
    [
      "a request header in an http-check",
      "option httpchk\nhttp-check send hdr x-a %[req.hdr(host)]",
      `params line 2: http-check send hdr x-a: "req.hdr" is not available in a health check rule (${check})`,
    ],
    [
      "a request header in a tcp-check",
      "option tcp-check\ntcp-check set-var(check.x) req.hdr(host)",
      `params line 2: tcp-check set-var(check.x): "req.hdr" is not available in a health check rule (${check})`,
    ],
  ])("refuses %s with 400 and changes nothing", async (_what, params, message) => {
    const before = await project();
    const rows = await counts();
    expect(await expectJson(post({ label: "web", params }), 400)).toEqual(errorBody(message));
    expect(await expectJson(post({ label: "newone", params }), 400)).toEqual(errorBody(message));
    expect(await project()).toEqual(before);
    expect(await counts()).toEqual(rows);
  });

  it.each([
    [
      "62 words after `server <name> <address>`",
      `check ${Array.from({ length: 30 }, (_, i) => `weight ${i}`).join(" ")} backup`,
      'backendContainers[0].params line 1: more than 61 words (HAProxy\'s limit of 64, with "server <name> <address>")',
    ],
    [
      "an agent-send string with a line feed",
      'agent-check agent-port 9999 agent-send "ready\\n"',
      'backendContainers[0].params line 1: "ready\\n" contains a control character',
    ],
  ])("refuses server params with %s with 400 and changes nothing", async (_what, params, message) => {
    const before = await project();
    const rows = await counts();
    const body = { label: "web", backendContainers: [{ containerId: web2, params }] };
    expect(await expectJson(post(body), 400)).toEqual(errorBody(message));
    expect(await project()).toEqual(before);
    expect(await counts()).toEqual(rows);
  });

  it("stores 64 words and a comment as written, which gensynchaprx by another tenant writes without the comment", async () => {
    const { app: container } = await createProjectWithContainers("pw", "node1.example.net", { app: "2001:db8::31" });
    const owner = await createApiUser("pwowner", ["pw"]);
    const params = `${words(64)} # the paths\nhttp-request deny if a`;
    await expectJson(
      as(owner, "/backends/pw", "POST", {
        label: "api",
        port: 8080,
        params,
        backendContainers: [{ containerId: container, params: "check inter 2s # fast" }],
      }),
      200,
    );
    const backend = (await expectJson(as(owner, "/projects/pw"), 200)).backends[0];
    expect(backend.params).toBe(params);

    const warnings = await expectJson(callWith({}, "/admin/gensynchaprx", "GET", undefined, tenant), 200);
    expect(warnings.filter((warning: string) => warning.includes(backend.FQLabel))).toEqual([]);
    const config = (await expectJson(asAdmin("/admin/haproxy"), 200)).files["haproxy.cfg"];
    expect(sectionOf(config, "# project pw: backend api")).toBe(
      `# project pw: backend api\nbackend ${backend.FQLabel}\n    ${words(64)}\n    http-request deny if a\n` +
        "    server node1.example.net_pw-app [2001:db8::31]:8080 check inter 2s\n",
    );
  });
});

describe("HAPROXY_PARAMS_EXTRA_DIRECTIVES", () => {
  const extra = { HAPROXY_PARAMS_EXTRA_DIRECTIVES: "http-send-name-header, hash-key" };

  it("allows the listed directives, still vetting their arguments", async () => {
    const body = { label: "extra", params: "http-send-name-header X-Server" };
    expect(await expectJson(callWith({}, "/backends/pt", "POST", body), 400)).toEqual(
      errorBody('params line 1: "http-send-name-header" is not an allowed directive'),
    );
    const rows = await counts();
    for (const [params, reason] of [
      ["http-send-name-header /etc/passwd", '"/etc/passwd" looks like a file or a path'],
      ["http-send-name-header fallback.pem", '"fallback.pem" looks like a file or a path'],
      ['http-send-name-header "${PROXY_ADMIN_PASSWORD}"', "environment expansion (${NAME} or $NAME) is not allowed"],
      ["http-send-name-header file", '"file" would read a file'],
    ]) {
      expect(await expectJson(callWith(extra, "/backends/pt", "POST", { label: "extra", params }), 400)).toEqual(
        errorBody(`params line 1: ${reason}`),
      );
    }
    expect(await counts()).toEqual(rows);
    await expectJson(callWith(extra, "/backends/pt", "POST", body), 200);
    expect((await project()).backends.find((b: { label: string }) => b.label === "extra").params).toBe(
      "http-send-name-header X-Server",
    );
  });

  it("lets no listed directive reach a network address, storing nothing", async () => {
    const vars = { HAPROXY_PARAMS_EXTRA_DIRECTIVES: "tcp-request, dispatch" };
    const rows = await counts();
    for (const [params, reason] of [
      ["dispatch metadata.internal:80", '"dispatch" takes a network address and cannot be allowed'],
      ["tcp-request content set-dst ipv4(169.254.169.254)", '"set-dst" chooses the address HAProxy connects to'],
      ["tcp-request content reject if { src ::1 }", '"::1" looks like a network address (1.2.3.4, host:port or IPv6)'],
    ]) {
      expect(await expectJson(callWith(vars, "/backends/pt", "POST", { label: "extra", params }), 400)).toEqual(
        errorBody(`params line 1: ${reason}`),
      );
    }
    expect(await counts()).toEqual(rows);
  });

  it("refuses a setting that would allow a section keyword or servers", async () => {
    for (const [value, name] of [
      ["program", "program"],
      ["hash-key server", "server"],
    ]) {
      const response = await callWith({ HAPROXY_PARAMS_EXTRA_DIRECTIVES: value }, "/backends/pt", "POST", {
        label: "web",
      });
      const body = await expectJson(response, 500);
      expect(body.payload).toMatch(
        new RegExp(
          `^proxy settings are invalid: HAPROXY_PARAMS_EXTRA_DIRECTIVES\\.\\d: "${name}" cannot be allowed in params$`,
        ),
      );
    }
  });
});

describe("rows stored before params were vetted", () => {
  /**
   * A project of the test's own: backend web with container one linked (its server params then overwritten by SQL, as
   * rows stored before the vetting), container two unlinked, and an API user granted the project.
   */
  async function legacyProject(label: string, addresses: [string, string]) {
    const { one, two } = await createProjectWithContainers(label, "node1.example.net", {
      one: addresses[0],
      two: addresses[1],
    });
    const id = await createBackend(label, { label: "web", port: 8080, backendContainers: [{ containerId: one }] });
    await env.DB.prepare("update backend_containers set params = ? where backend_id = ?")
      .bind("check crt /etc/shadow", id)
      .run();
    const user = await createApiUser(`${label}user`, [label]);
    return { id, one, two, user };
  }

  it("leave their backend, or their server, out of gensynchaprx, which warns and still succeeds", async () => {
    const { id, user } = await legacyProject("ptold", ["2001:db8::41", "2001:db8::42"]);
    await env.DB.prepare("update backends set params = ? where id = ?")
      .bind('"program" pwn\ncommand /bin/sh', id)
      .run();
    const generate = async () => {
      const response = await callWith({}, "/admin/gensynchaprx", "GET", undefined, ADMIN_AUTH);
      const warnings: string[] = await expectJson(response, 200);
      const config: string = (await expectJson(asAdmin("/admin/haproxy"), 200)).files["haproxy.cfg"];
      return { warnings: warnings.filter((warning) => warning.includes(` ${backend}`)), config };
    };
    const backend = (await expectJson(as(user, "/projects/ptold"), 200)).backends[0].FQLabel;
    const withBoth = await generate();
    expect(withBoth.warnings).toEqual([
      `WARN: backend ${backend} is left out: params line 1 refused ("program" opens a new section); its domains answer 503`,
    ]);
    expect(withBoth.config).not.toContain("# project ptold: backend web");
    expect(withBoth.config).not.toContain("program");
    expect(withBoth.config).not.toContain("/etc/shadow");

    await env.DB.prepare("update backends set params = null where id = ?").bind(id).run();
    const withServer = await generate();
    expect(withServer.warnings).toEqual([
      `WARN: backend ${backend}: server node1.example.net_ptold-one is left out: its params line 1 refused ("crt" would read a file)`,
    ]);
    expect(sectionOf(withServer.config, "# project ptold: backend web")).toBe(
      `# project ptold: backend web\nbackend ${backend}\n`,
    );
    expect(withServer.config).not.toContain("/etc/shadow");
  });

  it("are not copied to another backend by setContainersOf", async () => {
    const { one, two, user } = await legacyProject("ptcopy", ["2001:db8::51", "2001:db8::52"]);
    await createBackend("ptcopy", { label: "green", backendContainers: [{ containerId: two, params: "check" }] });
    const own = async () => expectJson(as(user, "/projects/ptcopy"), 200);
    const before = await own();
    const rows = await counts();
    expect(await expectJson(as(user, "/backends/ptcopy/green/setContainersOf/web", "PATCH"), 500)).toEqual(
      errorBody(
        `Unable to process backend container update: Target backend with label web: params of container ${one} line 1: "crt" would read a file`,
      ),
    );
    expect(await own()).toEqual(before);
    expect(await counts()).toEqual(rows);
  });
});
