// HAProxy params vetted when stored: each attack of the pentest, posted by a tenant (an API user granted one project),
// is answered 400 naming the field, line and reason, and nothing is stored; server params of container links too; the
// installation's extra directives; and rows stored before the vetting neither break gensynchaprx nor get copied on.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import {
  ADMIN_AUTH,
  as,
  asAdmin,
  createApiUser,
  createBackend,
  createContainer,
  createHost,
  createProject,
  errorBody,
  expectJson,
} from "../fixtures";

let tenant: string;
let web1: number;
let web2: number;

const post = (body: unknown) => as(tenant, "/backends/pt", "POST", body);
const project = async () => expectJson(as(tenant, "/projects/pt"), 200);
const counts = async () =>
  env.DB.prepare(
    "select (select count(*) from backends) as backends, (select count(*) from backend_containers) as refs, (select max(version) from backends) as version",
  ).first();

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
  await createProject("pt");
  await createHost("node1.example.net", "2001:db8::1");
  web1 = await createContainer("pt", { label: "web1", hostname: "node1.example.net", ipv6: "2001:db8::21" });
  web2 = await createContainer("pt", { label: "web2", hostname: "node1.example.net", ipv6: "2001:db8::22" });
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
  const legacy = async (sql: string, ...values: unknown[]) =>
    env.DB.prepare(sql)
      .bind(...values)
      .run();

  it("are written without their params by gensynchaprx, which warns and still succeeds", async () => {
    const backend = (await project()).backends.find((b: { label: string }) => b.label === "web");
    await legacy(
      "update backends set params = ? where id = ?",
      '"program" pwn\ncommand /bin/sh',
      backend.FQLabel.split("_")[1],
    );
    await legacy("update backend_containers set params = ? where container_id = ?", "check crt /etc/shadow", web1);
    const response = await callWith({}, "/admin/gensynchaprx", "GET", undefined, ADMIN_AUTH);
    const warnings = await expectJson(response, 200);
    const version = (await expectJson(asAdmin("/admin/haproxy/versions"), 200))[0].version;
    expect(warnings).toEqual([
      `WARN: backend ${backend.FQLabel}: params line 1 refused ("program" opens a new section); the backend is written without its params`,
      `WARN: backend ${backend.FQLabel}: params of server node1.example.net_pt-web1 line 1 refused ("crt" would read a file); the server is written without them`,
      `WARN: HAPROXY_AGENT_URL is not set: version ${version} is stored but no load balancer was updated`,
    ]);
    const config = (await expectJson(asAdmin("/admin/haproxy"), 200)).files["haproxy.cfg"];
    expect(config.slice(config.indexOf("# project pt: backend web"))).toBe(
      `# project pt: backend web\nbackend ${backend.FQLabel}\n    server node1.example.net_pt-web1 [2001:db8::21]:8080\n`,
    );
    expect(config).not.toContain("program");
    expect(config).not.toContain("/etc/shadow");
  });

  it("are not copied to another backend by setContainersOf", async () => {
    await createBackend("pt", { label: "green", backendContainers: [{ containerId: web2, params: "check" }] });
    const before = await project();
    const rows = await counts();
    expect(await expectJson(as(tenant, "/backends/pt/green/setContainersOf/web", "PATCH"), 500)).toEqual(
      errorBody(`Target backend with label web: params of container ${web1} line 1: "crt" would read a file`),
    );
    expect(await project()).toEqual(before);
    expect(await counts()).toEqual(rows);
  });
});
