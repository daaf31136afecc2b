// Issue 27's attacks, sent by one tenant against a real wrangler dev whose master agent runs a real haproxy: each is
// refused with 4xx and nothing stored, or made harmless; after every one, another tenant's gensynchaprx succeeds, and
// the configuration it ships passes haproxy -c. Also: a tenant reads only its own warnings, and tenants' calls close
// together share one run.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aclLineOfWords, serverParamsOfWords } from "../support/haproxy-param-words";
import {
  adminCall,
  api,
  basicAuth,
  haproxyCheck,
  proxyVars,
  startAgent,
  startBackendServer,
  type Agent,
} from "../support/proxy-haproxy-agent";
import { freePort } from "../support/processes.mjs";
import { requireBinary } from "../support/system-programs.mjs";
import { getWithRetry, startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";

let server: DevServer;
let agent: Agent;
const closers: (() => unknown)[] = [];
const mallory = basicAuth("mallory", "mallory-password");
const beta = basicAuth("betaops", "beta-password");
let malloryWeb = 0;

beforeAll(async () => {
  requireBinary("haproxy");
  const web = await startBackendServer("web", "127.0.0.7");
  closers.push(() => web.server.close());
  agent = await startAgent({ runHaproxy: true });
  server = await startWranglerDev(
    proxyVars(
      agent,
      { http: await freePort(), https: await freePort() },
      {
        PROXY_ADDRESS_EXCEPTIONS: "::ffff:127.0.0.0/104",
        PROXY_MAX_BACKENDS_PER_PROJECT: "3",
        PROXY_GENERATION_DEBOUNCE: "1s",
        RATELIMIT_ADMIN_TOKEN: "attacks-ratelimit-token",
        MASTER_KEY: "attacks-master-key",
        JWT_SECRET: "attacks-jwt-secret-0123456789abcdef",
      },
    ),
  );
  const call = adminCall(server.url);
  await call("/admin/hosts", "POST", { hostname: "node1.attacks.example", ipv6: "2001:db8:a7::1" });
  for (const project of ["mallory", "beta"]) {
    await call("/admin/projects", "POST", { label: project });
    const username = project === "beta" ? "betaops" : "mallory";
    await call("/admin/apiusers", "POST", { username, password: `${project}-password`, projectPatterns: [project] });
  }
  const betaWeb = await call("/containers/beta", "POST", {
    label: "web",
    hostname: "node1.attacks.example",
    ipv6: "::ffff:127.0.0.7",
  });
  await call("/backends/beta", "POST", {
    label: "site",
    port: web.port,
    backendContainers: [{ containerId: betaWeb.payload.value }],
    domainForwardings: [
      { domainName: "beta-corp.example" },
      { domainName: "www.beta-corp.example" },
      { domainName: "app.gamma-corp.example" },
    ],
  });
  const own = await call("/containers/mallory", "POST", {
    label: "app",
    hostname: "node1.attacks.example",
    ipv6: "2001:db8:a7::20",
  });
  malloryWeb = own.payload.value;
  await call("/backends/mallory", "POST", {
    label: "site",
    port: web.port,
    backendContainers: [{ containerId: malloryWeb }],
    domainForwardings: [{ domainName: "mallory.example" }],
  });
});

afterAll(async () => {
  await server?.stop();
  await agent?.stop();
  for (const close of closers) close();
});

/** What the tenant's project holds: compared before and after each refused attack. */
const malloryState = async () => (await api(server.url, "/projects/mallory", "GET", undefined, mallory)).body;

/** Another tenant deploys: the run succeeds and the live configuration passes haproxy -c. */
async function betaDeploys() {
  const response = await api(server.url, "/admin/gensynchaprx", "GET", undefined, beta);
  expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: [] });
  expect(haproxyCheck(path.join(agent.configDir, "haproxy.cfg"))).toMatchObject({ status: 0 });
  return response;
}

const backend = (params: string, backendContainers?: unknown[]) => ({
  label: "site",
  params,
  ...(backendContainers && { backendContainers }),
});

const COSTLY_REGEX =
  "a cost to HAProxy's PCRE above 10000000 character tests on a 16384-byte text (anchor it with ^, or keep each repetition from matching what follows it)";

const TOO_MUCH_SAMPLE_WORK =
  "more than 80000000 character tests a request in one backend for sample fetches and ACL matches (about 80 ms of " +
  "HAProxy's time; each evaluation costs: a header, cookie or URL parameter fetch 1048576, another fetch or a " +
  "converter 16384, each pattern 32768, and a -m sub, dir or dom pattern 16384 more per character; a named ACL " +
  "costs all its acl lines at each use): use each ACL in fewer conditions, give ACLs fewer patterns or acl lines, " +
  "match shorter substrings, or read headers and cookies in fewer places";

const refusals: [string, string, string, unknown, number, string][] = [
  [
    "response splitting in a header value after agent-send",
    "POST",
    "/backends/mallory",
    backend(
      'http-request return status 200 content-type text/plain hdr agent-send "a\\r\\nContent-Length: 0\\r\\n\\r\\nHTTP/1.1 200 OK"',
    ),
    400,
    `params line 1: "a\\r\\nContent-Length: 0\\r\\n\\r\\nHTTP/1.1 200 OK" contains a control character`,
  ],
  [
    "a header injected through set-header",
    "POST",
    "/backends/mallory",
    backend('http-request set-header agent-send "a\\r\\nX-Injected: 1"'),
    400,
    `params line 1: "a\\r\\nX-Injected: 1" contains a control character`,
  ],
  [
    "server params of 63 words",
    "POST",
    "/backends/mallory",
    backend("", [{ containerId: -1, params: serverParamsOfWords(63) }]),
    400,
    `backendContainers[0].params line 1: more than 61 words (HAProxy's limit of 64, with "server <name> <address>")`,
  ],
  [
    "int() of a word",
    "POST",
    "/backends/mallory",
    backend("http-request set-header x-a %[int(x)]"),
    400,
    `params line 1: http-request set-header: the value: argument 1 of "int" must be an integer, not "x"`,
  ],
  [
    "ipv4() of a word",
    "POST",
    "/backends/mallory",
    backend("http-request set-header x-a %[ipv4(x)]"),
    400,
    `params line 1: http-request set-header: the value: argument 1 of "ipv4" must be an IPv4 address, not "x"`,
  ],
  [
    "hdr() with three arguments",
    "POST",
    "/backends/mallory",
    backend("http-request set-header x-a %[hdr(a,b,c)]"),
    400,
    `params line 1: http-request set-header: the value: "hdr" takes at most 2 arguments, not 3`,
  ],
  [
    "var() with three arguments",
    "POST",
    "/backends/mallory",
    backend("http-request set-header x-a %[var(txn.x,a,b)]"),
    400,
    `params line 1: http-request set-header: the value: "var" takes at most 2 arguments, not 3`,
  ],
  [
    "a request header in an http-check",
    "POST",
    "/backends/mallory",
    backend("option httpchk\nhttp-check send hdr x-a %[req.hdr(host)]"),
    400,
    `params line 2: http-check send hdr x-a: "req.hdr" is not available in a health check rule (HAProxy's "backend tcp-check rule")`,
  ],
  [
    "a request header in a tcp-check",
    "POST",
    "/backends/mallory",
    backend("option tcp-check\ntcp-check set-var(check.x) req.hdr(host)"),
    400,
    `params line 2: tcp-check set-var(check.x): "req.hdr" is not available in a health check rule (HAProxy's "backend tcp-check rule")`,
  ],
  [
    "a container at a registered host's address",
    "POST",
    "/containers/mallory",
    { label: "spoof", hostname: "node1.attacks.example", ipv6: "2001:db8:a7::1" },
    409,
    `Invalid container: address 2001:db8:a7::1 is the address of a registered host`,
  ],
  [
    "GCP's metadata address",
    "POST",
    "/containers/mallory",
    { label: "meta", hostname: "node1.attacks.example", ipv6: "fd20:ce::254" },
    400,
    `ipv6: is a cloud metadata address`,
  ],
  [
    "loopback through the local-use NAT64 prefix",
    "POST",
    "/containers/mallory",
    { label: "nat", hostname: "node1.attacks.example", ipv6: "64:ff9b:1::7f00:1" },
    400,
    `ipv6: is in the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215), which may embed any IPv4 address`,
  ],
  [
    "a name under another tenant's domain",
    "POST",
    "/backends/mallory",
    {
      label: "site",
      domainForwardings: [{ domainName: "mallory.example" }, { domainName: "login.beta-corp.example" }],
    },
    409,
    `login.beta-corp.example: under beta-corp.example, which another project holds`,
  ],
  [
    "a name above another tenant's domain",
    "POST",
    "/backends/mallory",
    { label: "site", domainForwardings: [{ domainName: "mallory.example" }, { domainName: "gamma-corp.example" }] },
    409,
    `gamma-corp.example: another project holds names under it`,
  ],
  [
    "a regex PCRE runs in polynomial time, on each value of a header (it made HAProxy's watchdog kill it)",
    "POST",
    "/backends/mallory",
    backend("acl slow hdr(x) -m reg .*.*.*.*.*.*.*.*=x\nhttp-request deny if slow"),
    400,
    `params line 1: acl slow: a value: ".*.*.*.*.*.*.*.*=x" has ${COSTLY_REGEX}`,
  ],
  [
    "the same regex in replace-value, which runs once per value",
    "POST",
    "/backends/mallory",
    backend("http-request replace-value X .*.*.*.*.*.*.*.*=x y"),
    400,
    `params line 1: http-request replace-value: the match: ".*.*.*.*.*.*.*.*=x" has ${COSTLY_REGEX}`,
  ],
  [
    "one regex ACL used in nine rules: nine runs a request",
    "POST",
    "/backends/mallory",
    backend(["acl api path -m reg ^/api/", ...Array(9).fill("http-request set-header X-Api 1 if api")].join("\n")),
    400,
    `params line 10: http-request set-header: ACL api: more than 8 regular expression runs a request in one backend (each pattern, once more for each further use of its ACL; each run may cost HAProxy about 10 ms)`,
  ],
  [
    "a header ACL used 58 times in each of 47 rules (9742 characters): 1.1 s of HAProxy's CPU on 7000 header values",
    "POST",
    "/backends/mallory",
    backend(
      [
        "acl a hdr(x) -m str zzz",
        ...Array.from({ length: 47 }, (_, n) => `http-request set-header y${n} z if ${Array(58).fill("!a").join(" ")}`),
      ].join("\n"),
    ),
    400,
    `params line 3: http-request set-header: ACL a: ${TOO_MUCH_SAMPLE_WORK}`,
  ],
];

describe("each attack of issue 27", () => {
  it.each(refusals)("%s: refused with 4xx, nothing stored; another tenant then deploys", async (...row) => {
    const [, method, pathName, given, status, payload] = row;
    // The server params need the tenant's own container, whose id is known only once it exists.
    const body = JSON.parse(JSON.stringify(given).replace('"containerId":-1', `"containerId":${malloryWeb}`));
    const before = await malloryState();
    const response = await api(server.url, pathName, method, body, mallory);
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ success: false, payload, warnings: [] });
    expect(await malloryState()).toEqual(before);
    await betaDeploys();
  });

  it("a line of 64 words and a comment: stored, written without the comment, harmless", async () => {
    const line = `${aclLineOfWords(64)} #comment`;
    const response = await api(server.url, "/backends/mallory", "POST", backend(line), mallory);
    expect(response.status).toBe(200);
    await betaDeploys();
    const live = readFileSync(path.join(agent.configDir, "haproxy.cfg"), "utf8");
    expect(live).toContain(`\n    ${aclLineOfWords(64)}\n`);
    expect(live).not.toContain("#comment");
    expect((await api(server.url, "/backends/mallory", "POST", backend(""), mallory)).status).toBe(200);
  });

  it("more backends than PROXY_MAX_BACKENDS_PER_PROJECT: refused naming the setting", async () => {
    expect((await api(server.url, "/admin/projects", "POST", { label: "quota" })).status).toBe(200);
    const body = { username: "quotauser", password: "quota-password", projectPatterns: ["quota"] };
    expect((await api(server.url, "/admin/apiusers", "POST", body)).status).toBe(200);
    const tenant = basicAuth("quotauser", "quota-password");
    for (const label of ["one", "two", "three"]) {
      expect((await api(server.url, "/backends/quota", "POST", { label }, tenant)).status).toBe(200);
    }
    const state = async () => (await api(server.url, "/projects/quota", "GET", undefined, tenant)).body;
    const before = await state();
    const response = await api(server.url, "/backends/quota", "POST", { label: "four" }, tenant);
    expect(response.status).toBe(403);
    expect(response.body.payload).toContain("PROXY_MAX_BACKENDS_PER_PROJECT");
    expect(await state()).toEqual(before);
    await betaDeploys();
  });

  it("/news?sort= with 100 terms and a 200 KB rate-limit value: 400, nothing else happens", async () => {
    const user = await fetch(`${server.url}/users`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        access_token: "attacks-master-key",
        email: "reader@attacks.example",
        password: "secret-password",
      }),
    });
    expect(user.status).toBe(201);
    const { token } = (await user.json()) as { token: string };
    const sort = Array(100).fill("title").join(",");
    const news = await getWithRetry(`${server.url}/news?sort=${sort}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect({ status: news.status, body: await news.json() }).toEqual({
      status: 400,
      body: {
        valid: false,
        name: "maxlength",
        param: "sort",
        value: sort,
        maxlength: 12,
        message: "sort must have length lower than or equal to 12",
      },
    });
    const limited = await fetch(`${server.url}/json`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        domain: "example",
        descriptors: [{ entries: [{ key: "remote_address", value: "x".repeat(200_000) }] }],
      }),
    });
    expect(limited.status).toBe(400);
    expect(await limited.text()).toContain("RATELIMIT_MAX_VALUE_BYTES");
  });
});

describe("what one tenant can make the others see or pay", () => {
  it("a tenant's warnings name only its own projects; the administrator's name all", async () => {
    // A backend of mallory's without containers but with a domain: the generation warns about it.
    expect(
      (
        await api(
          server.url,
          "/backends/mallory",
          "POST",
          { label: "empty", domainForwardings: [{ domainName: "empty.mallory.example" }] },
          mallory,
        )
      ).status,
    ).toBe(200);
    try {
      expect((await betaDeploys()).body).toEqual([]);
      const own = await api(server.url, "/admin/gensynchaprx", "GET", undefined, mallory);
      expect(own.body).toEqual([
        expect.stringMatching(
          /^WARN: backend mallory_\d+_empty has no containers: its domains are not routed \(empty\.mallory\.example\)$/,
        ),
      ]);
      const admin = await api(server.url, "/admin/gensynchaprx");
      expect(admin.body).toEqual(own.body);
    } finally {
      await api(server.url, "/backends/mallory", "POST", { label: "empty", domainForwardings: [] }, mallory);
    }
  });

  it("tenants' calls close together share one run, so they cause one reload", async () => {
    const answers = await Promise.all([
      api(server.url, "/admin/gensynchaprx", "GET", undefined, mallory),
      api(server.url, "/admin/gensynchaprx", "GET", undefined, beta),
      api(server.url, "/admin/gensynchaprx", "GET", undefined, mallory),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((answer) => answer.headers.get("X-Job-Id"))).size).toBe(1);
  });
});
