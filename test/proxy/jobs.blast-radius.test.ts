// gensynchaprx when the master's `haproxy -c` refuses one tenant's backend: the backend is left out, its domains
// answer 503, every other project deploys, the owning project and the administrator are told, other tenants read
// nothing of it; a refusal that names no line is traced by leaving backends out half at a time; a refusal that names
// what no tenant wrote, or persists, still fails the run.
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { alertLines } from "../../haproxy-agent/alerts.mjs";
import { MAX_ISOLATION_ROUNDS, TRACED } from "../../src/proxy/haproxy/checked-bundle";
import { as, asAdmin, createApiUser, createBackend, createHost, expectJson } from "../support/proxy-api";
import { createProjectWithContainers } from "../support/proxy-fixtures";
import { agentEnv, applied, callWith, fakeAgents, type AgentCall } from "../support/proxy-job-env";

const EXTRA = { HAPROXY_PARAMS_EXTRA_DIRECTIVES: "bogus-directive" };

/**
 * Checks as HAProxy 2.6 would report an unknown keyword: an ALERT naming the line of every `bogus-directive` (at most
 * `perCheck` of them, as a parse that aborts early would), valid when there is none.
 */
const haproxyLikeCheck =
  (perCheck = Infinity) =>
  (call: AgentCall) => {
    const lines = call.body.files["haproxy.cfg"].split("\n");
    const alerts = lines
      .map((line, index) => ({ line, number: index + 1 }))
      .filter(({ line }) => line.trim().startsWith("bogus-directive"))
      .slice(0, perCheck)
      .map(
        ({ number }) =>
          `config : parsing [/etc/haproxy/.check-0001/haproxy.cfg:${number}] : unknown keyword 'bogus-directive' in 'backend' section`,
      );
    if (alerts.length === 0) return Response.json({ valid: true });
    alerts.push("config : Fatal errors found in configuration.");
    return Response.json({ valid: false, error: `haproxy -c failed (exit 1): [ALERT] ${alerts[0]}`, alerts });
  };

/**
 * Checks as HAProxy 2.6 refuses a `default-server` line for every server it reaches: an ALERT per server line of each
 * section holding `bogus-directive`, listed as the real agent lists them.
 */
const perServerCheck = (call: AgentCall) => {
  const config = call.body.files["haproxy.cfg"];
  let refusing = false;
  const output = config.split("\n").flatMap((line, index) => {
    if (/^\S/.test(line)) refusing = false;
    if (line.includes("bogus-directive")) refusing = true;
    if (!refusing || !line.startsWith("    server ")) return [];
    return [`[ALERT] (7) : config : [/etc/haproxy/.check-1/haproxy.cfg:${index + 1}] : 'server x' : refused`];
  });
  if (output.length === 0) return Response.json({ valid: true });
  const alerts = alertLines(output.join("\n"), config);
  return Response.json({ valid: false, error: "haproxy -c failed (exit 1)", alerts });
};

/** A stored row that bypasses vetting, as rows from before vetting exist. */
const storeParams = (backendId: number, params: string) =>
  env.DB.prepare("update backends set params = ? where id = ?").bind(params, backendId).run();

let badBackend: number;
let goodBackend: number;
let badTenant: string;
let goodTenant: string;

beforeAll(async () => {
  await createHost("node1.blast.example", "2001:db8:b1::1");
  for (const [project, suffix] of [
    ["blastbad", "a"],
    ["blastgood", "b"],
  ]) {
    const { web } = await createProjectWithContainers(project, "node1.blast.example", {
      web: `2001:db8:b1::${suffix}`,
    });
    const id = await createBackend(project, {
      label: "site",
      port: 8080,
      backendContainers: [{ containerId: web }],
      domainForwardings: [{ domainName: `www.${project}.example` }],
    });
    if (project === "blastbad") badBackend = id;
    else goodBackend = id;
  }
  badTenant = await createApiUser("blastbadder", ["blastbad"]);
  goodTenant = await createApiUser("blastgooder", ["blastgood"]);
});

beforeEach(async () => {
  vi.spyOn(console, "error").mockImplementation(() => {});
  await storeParams(badBackend, "bogus-directive on\nbalance roundrobin");
  await storeParams(goodBackend, "balance leastconn");
});

afterEach(() => vi.restoreAllMocks());

describe("a backend the load balancer refuses", () => {
  it("is left out, its domains answer 503, and every other backend deploys", async () => {
    const { calls, checks } = fakeAgents(applied, haproxyLikeCheck());
    const response = await callWith(agentEnv(EXTRA), "/admin/gensynchaprx");
    const warnings = await expectJson(response, 200);
    const left = `backend blastbad_${badBackend}_site is left out: the load balancer refused it (unknown keyword 'bogus-directive' in 'backend' section); its domains answer 503`;
    expect(warnings).toContain(`WARN: ${left}`);
    expect(checks).toHaveLength(2);
    expect(checks[0].body.files["haproxy.cfg"]).toContain(`backend blastbad_${badBackend}_site\n`);
    expect(calls).toHaveLength(1);
    const shipped = calls[0].body.files;
    expect(shipped["haproxy.cfg"]).toBe(checks[1].body.files["haproxy.cfg"]);
    expect(shipped["haproxy.cfg"]).not.toContain("bogus-directive");
    expect(shipped["haproxy.cfg"]).not.toContain(`backend blastbad_`);
    expect(shipped["haproxy.cfg"]).toContain(`backend blastgood_${goodBackend}_site\n    balance leastconn\n`);
    expect(shipped["haproxy.cfg"]).toContain(
      "\nbackend bk_unavailable\n" +
        "    # the domains of backends the load balancer refused (see the generation's warnings)\n" +
        '    http-request return status 503 content-type text/plain string "This site is not available: its configuration was refused"\n',
    );
    expect(shipped["domain2backend.map"]).toContain("\nwww.blastbad.example bk_unavailable\n");
    expect(shipped["domain2backend.map"]).toContain(`\nwww.blastgood.example blastgood_${goodBackend}_site\n`);

    const active = await expectJson(callWith(agentEnv(), "/admin/haproxy"), 200);
    expect(active).toMatchObject({
      status: "active",
      digest: calls[0].body.digest,
      jobId: Number(response.headers.get("X-Job-Id")),
    });
    // The owning project is told, with HAProxy's reason; the other project reads nothing of it.
    const problem = { project: "blastbad", backend: "site", kind: "excluded", message: left };
    expect(await expectJson(as(badTenant, "/projects/blastbad/deployment"), 200)).toEqual({
      version: active.version,
      problems: [problem],
    });
    expect(await expectJson(as(goodTenant, "/projects/blastgood/deployment"), 200)).toEqual({
      version: active.version,
      problems: [],
    });
    expect(await expectJson(as(goodTenant, "/projects/blastbad/deployment"), 404)).toMatchObject({ success: false });
    expect(await expectJson(asAdmin("/projects/blastbad/deployment"), 200)).toEqual({
      version: active.version,
      problems: [problem],
    });
  });

  it("is named in the warnings of its own project's tenants and the administrator, never another tenant's", async () => {
    fakeAgents(applied, haproxyLikeCheck());
    const good = await expectJson(callWith(agentEnv(EXTRA), "/admin/gensynchaprx", goodTenant), 200);
    expect(JSON.stringify(good)).not.toContain("blastbad");
    const bad = await expectJson(callWith(agentEnv(EXTRA), "/admin/gensynchaprx", badTenant), 200);
    expect(bad.filter((warning: string) => warning.includes("blastbad_"))).toEqual([
      `WARN: backend blastbad_${badBackend}_site is left out: the load balancer refused it (unknown keyword 'bogus-directive' in 'backend' section); its domains answer 503`,
    ]);
    expect(JSON.stringify(bad)).not.toContain("blastgood");
    const admin = await expectJson(callWith(agentEnv(EXTRA), "/admin/gensynchaprx"), 200);
    expect(admin).toEqual(expect.arrayContaining(bad));
  });

  it("is traced over as many rounds as HAProxy needs when its parse stops at the first refusal", async () => {
    await storeParams(goodBackend, "bogus-directive off");
    const { calls, checks } = fakeAgents(applied, haproxyLikeCheck(1));
    const warnings = await expectJson(callWith(agentEnv(EXTRA), "/admin/gensynchaprx"), 200);
    expect(checks).toHaveLength(3);
    expect(calls).toHaveLength(1);
    expect(warnings.filter((warning: string) => warning.includes("is left out"))).toHaveLength(2);
    expect(calls[0].body.files["domain2backend.map"]).toContain("\nwww.blastgood.example bk_unavailable\n");
  });

  it("fails the run, nothing shipped, when refusals remain after MAX_ISOLATION_ROUNDS rounds", async () => {
    const webs = await createProjectWithContainers(
      "blastmany",
      "node1.blast.example",
      Object.fromEntries(
        Array.from({ length: MAX_ISOLATION_ROUNDS }, (_, index) => [`web${index}`, `2001:db8:b1::1${index}`]),
      ),
    );
    try {
      // More refused backends than rounds, and a parse that stops at the first refusal.
      for (let index = 0; index < MAX_ISOLATION_ROUNDS; index++) {
        const id = await createBackend("blastmany", {
          label: `site${index}`,
          backendContainers: [{ containerId: webs[`web${index}`] }],
        });
        await storeParams(id, "bogus-directive on");
      }
      const { calls, checks } = fakeAgents(applied, haproxyLikeCheck(1));
      const response = await callWith(agentEnv(EXTRA), "/admin/gensynchaprx");
      const body = await expectJson(response, 500);
      expect(checks).toHaveLength(MAX_ISOLATION_ROUNDS);
      expect(calls).toEqual([]);
      const [rejected] = await expectJson(callWith(agentEnv(), "/admin/haproxy/versions"), 200);
      expect(rejected).toMatchObject({ status: "rejected", jobId: Number(response.headers.get("X-Job-Id")) });
      expect(body.payload).toBe(
        `Unable to reload and sync of HAProxy: agent http://agent.test:9400 refused version ${rejected.version} ` +
          `(still refused after ${MAX_ISOLATION_ROUNDS} rounds of leaving backends out): haproxy -c failed (exit 1): ` +
          `[ALERT] config : parsing [/etc/haproxy/.check-0001/haproxy.cfg:${
            checks
              .at(-1)!
              .body.files["haproxy.cfg"].split("\n")
              .findIndex((line) => line.includes("bogus-directive")) + 1
          }] : ` +
          "unknown keyword 'bogus-directive' in 'backend' section. The previous configuration is still active.",
      );
    } finally {
      await expectJson(asAdmin("/admin/projects/blastmany", "DELETE"), 200);
    }
  });

  it("names every refused backend in one round, however many servers each refuses", async () => {
    const labels = Array.from({ length: 24 }, (_, index) => [`web${index}`, `2001:db8:b2::${index + 1}`]);
    const webs = await createProjectWithContainers("blastwide", "node1.blast.example", Object.fromEntries(labels));
    try {
      const backendContainers = Object.values(webs).map((containerId) => ({ containerId }));
      for (let index = 0; index < 12; index++) {
        const id = await createBackend("blastwide", { label: `site${index}`, backendContainers });
        await storeParams(id, "bogus-directive on");
      }
      const { calls, checks } = fakeAgents(applied, perServerCheck);
      const warnings = await expectJson(callWith(agentEnv(EXTRA), "/admin/gensynchaprx"), 200);
      expect(checks).toHaveLength(2);
      expect(calls).toHaveLength(1);
      expect(warnings.filter((warning: string) => warning.includes("is left out"))).toHaveLength(13);
    } finally {
      await expectJson(asAdmin("/admin/projects/blastwide", "DELETE"), 200);
    }
  });

  it("fails the run when a refusal also names what no tenant wrote", async () => {
    const { calls } = fakeAgents(applied, (call) => {
      const refused = haproxyLikeCheck()(call);
      return (refused.json() as Promise<{ alerts: string[] }>).then((body) =>
        Response.json({
          valid: false,
          error: "haproxy -c failed (exit 1): two",
          alerts: ["config : parsing [haproxy.cfg:5] : unknown keyword 'x' in 'global' section", ...body.alerts],
        }),
      );
    });
    const body = await expectJson(callWith(agentEnv(EXTRA), "/admin/gensynchaprx"), 500);
    expect(calls).toEqual([]);
    expect(body.payload).toMatch(
      /^Unable to reload and sync of HAProxy: agent http:\/\/agent\.test:9400 refused version \d+: haproxy -c failed \(exit 1\): two\. The previous configuration is still active\.$/,
    );
  });
});

/** Checks as a `haproxy -c` that crashes (no ALERT line) while any `bogus-directive` is in the configuration. */
const crashingCheck = (call: AgentCall) =>
  call.body.files["haproxy.cfg"].includes("bogus-directive")
    ? Response.json({ valid: false, error: "haproxy -c failed (exit -1): malloc(): corrupted top size", alerts: [] })
    : Response.json({ valid: true });

/** The tenant sections of a checked file, in order. */
const tenantSections = (call: AgentCall) => call.body.files["haproxy.cfg"].match(/^backend \S+_\d+_\S+$/gm) ?? [];

/**
 * The checks one round of tracing makes among `sections` while `crashes` is among them: halves are left out from the
 * front, the half kept out while the rest is searched; answers the section found and the checks it took.
 */
function halving(sections: string[], crashes: (section: string) => boolean) {
  let suspects = sections;
  let leftOut: string[] = [];
  let checks = 0;
  while (suspects.length > 1) {
    const half = suspects.slice(0, Math.ceil(suspects.length / 2));
    checks++;
    const passes = !sections.some(
      (section) => crashes(section) && !leftOut.includes(section) && !half.includes(section),
    );
    if (passes) suspects = half;
    else [leftOut, suspects] = [[...leftOut, ...half], suspects.slice(half.length)];
  }
  return { found: suspects[0], checks };
}

describe("a refusal that names no line", () => {
  const left = (backend: string) =>
    `WARN: backend ${backend} is left out: the load balancer refused it (${TRACED}); its domains answer 503`;

  it("is traced to the backend without which the check passes, which is left out", async () => {
    const { calls, checks } = fakeAgents(applied, crashingCheck);
    const warnings = await expectJson(callWith(agentEnv(EXTRA), "/admin/gensynchaprx"), 200);
    const bad = `blastbad_${badBackend}_site`;
    expect(warnings.filter((warning: string) => warning.includes("is left out"))).toEqual([left(bad)]);
    const round = halving(tenantSections(checks[0]), (section) => section === `backend ${bad}`);
    expect(round.found).toBe(`backend ${bad}`);
    // The first check, one without every tenant backend, the halvings, and the candidate shipped.
    expect(checks).toHaveLength(3 + round.checks);
    expect(tenantSections(checks[1])).toEqual([]);
    expect(calls).toHaveLength(1);
    expect(calls[0].body.files["haproxy.cfg"]).toBe(checks.at(-1)!.body.files["haproxy.cfg"]);
    expect(tenantSections(checks.at(-1)!)).toEqual(tenantSections(checks[0]).filter((s) => s !== `backend ${bad}`));
    expect(calls[0].body.files["haproxy.cfg"]).toContain(
      `backend blastgood_${goodBackend}_site\n    balance leastconn\n`,
    );
    expect(calls[0].body.files["domain2backend.map"]).toContain("\nwww.blastbad.example bk_unavailable\n");
  });

  it("traces two crashing backends over two rounds, checking once without every tenant backend", async () => {
    await storeParams(goodBackend, "bogus-directive off\nbalance leastconn");
    const { calls, checks } = fakeAgents(applied, crashingCheck);
    const warnings = await expectJson(callWith(agentEnv(EXTRA), "/admin/gensynchaprx"), 200);
    const crashing = [`backend blastbad_${badBackend}_site`, `backend blastgood_${goodBackend}_site`];
    const first = halving(tenantSections(checks[0]), (section) => crashing.includes(section));
    const second = halving(
      tenantSections(checks[0]).filter((section) => section !== first.found),
      (section) => crashing.includes(section),
    );
    expect([first.found, second.found].sort()).toEqual(crashing);
    expect(warnings.filter((warning: string) => warning.includes("is left out")).sort()).toEqual(
      crashing.map((section) => left(section.slice("backend ".length))),
    );
    // Round 1: its check, the one without every tenant backend, its halvings; round 2: its check and its halvings
    // (the check without every tenant backend is not made again); then the candidate shipped.
    expect(checks).toHaveLength(2 + first.checks + 1 + second.checks + 1);
    expect(tenantSections(checks[1])).toEqual([]);
    expect(calls).toHaveLength(1);
    expect(calls[0].body.files["haproxy.cfg"]).not.toContain("bogus-directive");
  });

  it("fails the run when the check fails without any tenant backend too", async () => {
    const { calls, checks } = fakeAgents(applied, () =>
      Response.json({ valid: false, error: "haproxy -c failed (exit -1): malloc(): corrupted top size", alerts: [] }),
    );
    const body = await expectJson(callWith(agentEnv(EXTRA), "/admin/gensynchaprx"), 500);
    expect(checks).toHaveLength(2);
    expect(checks[1].body.files["haproxy.cfg"]).not.toContain("\nbackend blast");
    expect(calls).toEqual([]);
    expect(body.payload).toMatch(
      /^Unable to reload and sync of HAProxy: agent http:\/\/agent\.test:9400 refused version \d+: haproxy -c failed \(exit -1\): malloc\(\): corrupted top size\. The previous configuration is still active\.$/,
    );
  });
});
