// The HAProxy agent on its own, over HTTP with a real `haproxy -c`: its token, the bundle checks (paths, digest),
// the refusal of a configuration haproxy rejects, an unchanged bundle, stale versions for slaves, the restore
// of the previous files when the reload fails, the check that applies nothing, the status that shows files edited by
// hand, and the environment haproxy and the reload command get (PATH only).
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleDigest } from "../../src/proxy/haproxy/config";
import { AGENT_TOKEN, root, tempDir, until, viaHaproxy } from "../support/proxy-haproxy-agent";
import { freePort } from "../support/processes.mjs";
import { requireBinary } from "../support/system-programs.mjs";

const agents: { child: ChildProcess; dir: string }[] = [];

/**
 * Starts an agent whose reload command appends a line to `reloads` in its directory (or runs `reloadCmd`, given the
 * directory), with `extraEnv` added to its environment.
 */
async function startTestAgent(reloadCmd?: (dir: string) => string, extraEnv: Record<string, string> = {}) {
  const dir = tempDir("agent");
  const port = await freePort();
  const reload = reloadCmd?.(dir) ?? `echo reload >> ${dir}/reloads`;
  const child = spawn(
    process.execPath,
    [
      path.join(root, "haproxy-agent", "agent.mjs"),
      "--config-dir",
      dir,
      "--reload-cmd",
      reload,
      "--port",
      String(port),
    ],
    { env: { ...process.env, ...extraEnv, HAPROXY_AGENT_TOKEN: AGENT_TOKEN }, stdio: "ignore" },
  );
  agents.push({ child, dir });
  const url = `http://127.0.0.1:${port}`;
  await until("the agent to listen", async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined), 20_000);
  return {
    url,
    dir,
    reloads: () =>
      existsSync(`${dir}/reloads`) ? readFileSync(`${dir}/reloads`, "utf8").split("\n").filter(Boolean).length : 0,
  };
}

/** The global and defaults sections of the agent's test configurations, and the opening of their one frontend. */
const PREAMBLE = [
  "global",
  "    default-path config",
  "defaults",
  "    mode http",
  "    timeout connect 5s",
  "    timeout client 5s",
  "    timeout server 5s",
  "frontend f",
];

const CONFIG = (marker: string) =>
  [
    ...PREAMBLE,
    "    bind 127.0.0.1:65000",
    "    http-request set-var(txn.backend) req.hdr(host),map(domain2backend.map,bk_default)",
    "    use_backend %[var(txn.backend)]",
    "backend bk_default",
    `    # ${marker}`,
    "    http-request return status 404",
    "",
  ].join("\n");

async function bundle(version: number, files: Record<string, string>, onlyIfNewer = false) {
  return { version, digest: await bundleDigest(files), onlyIfNewer, files };
}

async function push(url: string, body: unknown, token = AGENT_TOKEN) {
  const response = await fetch(`${url}/v1/config`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const status = async (url: string) =>
  (await fetch(`${url}/v1/status`, { headers: { Authorization: `Bearer ${AGENT_TOKEN}` } })).json() as Promise<
    Record<string, unknown>
  >;

async function check(url: string, files: Record<string, string>, token = AGENT_TOKEN) {
  const response = await fetch(`${url}/v1/check`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ digest: await bundleDigest(files), files }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const goodFiles = (marker: string) => ({
  "haproxy.cfg": CONFIG(marker),
  "domain2backend.map": "a.example bk_default\n",
});

beforeAll(() => {
  requireBinary("haproxy");
});

afterAll(async () => {
  for (const { child, dir } of agents) {
    child.kill("SIGTERM");
    // The haproxy a reload command started (master-worker, daemonised).
    if (existsSync(`${dir}/haproxy.pid`)) {
      try {
        process.kill(Number(readFileSync(`${dir}/haproxy.pid`, "utf8").trim()), "SIGTERM");
      } catch {}
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("haproxy-agent", () => {
  it("wants its bearer token", async () => {
    const agent = await startTestAgent();
    expect(await push(agent.url, await bundle(1, goodFiles("one")), "wrong")).toEqual({
      status: 401,
      body: { error: "a valid bearer token is required" },
    });
    expect((await fetch(`${agent.url}/v1/status`)).status).toBe(401);
  });

  it("applies a bundle: checks it, moves it in, reloads, and tells its version", async () => {
    const agent = await startTestAgent();
    const first = await bundle(3, goodFiles("one"));
    expect(await push(agent.url, first)).toEqual({ status: 200, body: { outcome: "applied", version: 3 } });
    expect(readFileSync(path.join(agent.dir, "haproxy.cfg"), "utf8")).toBe(CONFIG("one"));
    expect(agent.reloads()).toBe(1);
    const status = await fetch(`${agent.url}/v1/status`, { headers: { Authorization: `Bearer ${AGENT_TOKEN}` } });
    expect(await status.json()).toMatchObject({ version: 3, digest: first.digest });

    // The same digest again: acknowledged without a reload.
    expect(await push(agent.url, await bundle(4, goodFiles("one")))).toEqual({
      status: 200,
      body: { outcome: "unchanged", version: 4 },
    });
    expect(agent.reloads()).toBe(1);
  });

  it("refuses what haproxy -c refuses and keeps the live files", async () => {
    const agent = await startTestAgent();
    await push(agent.url, await bundle(1, goodFiles("live")));
    const broken = await push(
      agent.url,
      await bundle(2, { ...goodFiles("broken"), "haproxy.cfg": `${CONFIG("broken")}backend x\n    no-such-keyword\n` }),
    );
    expect(broken.status).toBe(422);
    expect(broken.body.error).toMatch(/^haproxy -c failed \(exit 1\): \[ALERT\].*unknown keyword 'no-such-keyword'/s);
    expect(broken.body.error).not.toContain("[NOTICE]");
    // haproxy's ALERT lines, whatever the length of its output: the control plane traces them to backends.
    expect(broken.body.alerts).toEqual([
      expect.stringMatching(
        /^config : parsing \[\/.*\/\.staging-2-[0-9a-f]{8}\/haproxy\.cfg:16\] : unknown keyword 'no-such-keyword' in 'backend' section$/,
      ),
      expect.stringMatching(/^config : Error\(s\) found in configuration file : \/.*\/haproxy\.cfg$/),
      "config : Fatal errors found in configuration.",
    ]);
    expect(readFileSync(path.join(agent.dir, "haproxy.cfg"), "utf8")).toBe(CONFIG("live"));
    expect(agent.reloads()).toBe(1);
  });

  it("refuses paths outside the bundle's files and content that does not match the digest", async () => {
    const agent = await startTestAgent();
    for (const name of ["../escape.cfg", "certs/../../x.pem", "/etc/passwd", "other.map"]) {
      const files = { ...goodFiles("x"), [name]: "x" };
      expect(await push(agent.url, await bundle(1, files))).toEqual({
        status: 400,
        body: { error: `files: ${JSON.stringify(name)} is not a bundle file` },
      });
    }
    const tampered = await bundle(1, goodFiles("x"));
    tampered.files["domain2backend.map"] += "b.example bk_default\n";
    expect(await push(agent.url, tampered)).toEqual({
      status: 400,
      body: { error: "the files do not match the digest (truncated upload?)" },
    });
    expect(await push(agent.url, { version: 1, digest: "x", files: { "domain2backend.map": "" } })).toEqual({
      status: 400,
      body: { error: "files: haproxy.cfg is missing" },
    });
    expect(existsSync(path.join(agent.dir, "haproxy.cfg"))).toBe(false);
  });

  it("as a slave, refuses a version older than the one it runs", async () => {
    const agent = await startTestAgent();
    await push(agent.url, await bundle(7, goodFiles("seven"), true));
    expect(await push(agent.url, await bundle(6, goodFiles("six"), true))).toEqual({
      status: 409,
      body: { error: "this load balancer runs version 7, newer than 6", version: 7 },
    });
    expect(readFileSync(path.join(agent.dir, "haproxy.cfg"), "utf8")).toBe(CONFIG("seven"));
    // The master's push is never refused for its number (a new control-plane database starts again at 1).
    expect(await push(agent.url, await bundle(1, goodFiles("master")))).toMatchObject({
      status: 200,
      body: { outcome: "applied" },
    });
  });

  it("checks a bundle with haproxy -c without applying it", async () => {
    const agent = await startTestAgent();
    await push(agent.url, await bundle(1, goodFiles("live")));
    expect(await check(agent.url, goodFiles("other"))).toEqual({ status: 200, body: { valid: true, version: 1 } });
    const broken = await check(agent.url, { ...goodFiles("x"), "haproxy.cfg": `${CONFIG("x")}backend x\n    nope\n` });
    expect(broken.status).toBe(200);
    expect(broken.body.valid).toBe(false);
    expect(broken.body.error).toMatch(/^haproxy -c failed \(exit 1\): \[ALERT\].*unknown keyword 'nope'/s);
    expect((broken.body.alerts as string[])[0]).toMatch(
      /^config : parsing \[\/.*\/\.check-[0-9a-f]{8}\/haproxy\.cfg:16\] : unknown keyword 'nope' in 'backend' section$/,
    );
    expect(broken.body.alerts).toHaveLength(3);
    // Nothing applied, nothing reloaded, no scratch directory left behind.
    expect(readFileSync(path.join(agent.dir, "haproxy.cfg"), "utf8")).toBe(CONFIG("live"));
    expect(agent.reloads()).toBe(1);
    expect(readdirSync(agent.dir).filter((name) => name.startsWith(".check-"))).toEqual([]);
    expect((await check(agent.url, goodFiles("x"), "wrong")).status).toBe(401);
    const getCheck = await fetch(`${agent.url}/v1/check`, { headers: { Authorization: `Bearer ${AGENT_TOKEN}` } });
    expect(getCheck.status).toBe(405);
  });

  it("tells in its status what is on its disk: a file edited by hand shows, and the next push repairs it", async () => {
    const agent = await startTestAgent();
    expect(await status(agent.url)).toEqual({
      version: null,
      digest: null,
      appliedAt: null,
      diskDigest: null,
      lastError: null,
    });
    const first = await bundle(5, goodFiles("one"));
    await push(agent.url, first);
    expect(await status(agent.url)).toEqual({
      version: 5,
      digest: first.digest,
      appliedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      diskDigest: first.digest,
      lastError: null,
    });

    appendFileSync(path.join(agent.dir, "haproxy.cfg"), "# edited by hand\n");
    const edited = await status(agent.url);
    expect(edited).toMatchObject({ version: 5, digest: first.digest });
    expect(edited.diskDigest).toBe(
      await bundleDigest({ ...goodFiles("one"), "haproxy.cfg": `${CONFIG("one")}# edited by hand\n` }),
    );

    // The same bundle again is not "unchanged" any more: it is applied, and the disk is the bundle again.
    expect(await push(agent.url, await bundle(6, goodFiles("one")))).toEqual({
      status: 200,
      body: { outcome: "applied", version: 6 },
    });
    expect(await status(agent.url)).toMatchObject({ version: 6, digest: first.digest, diskDigest: first.digest });
    expect(readFileSync(path.join(agent.dir, "haproxy.cfg"), "utf8")).toBe(CONFIG("one"));
  });

  it("keeps the last failed apply in its status until one succeeds", async () => {
    const agent = await startTestAgent();
    await push(agent.url, await bundle(1, goodFiles("live")));
    const broken = await push(agent.url, await bundle(2, { ...goodFiles("b"), "haproxy.cfg": `${CONFIG("b")}nope\n` }));
    expect(broken.status).toBe(422);
    expect((await status(agent.url)).lastError).toEqual({
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      version: 2,
      message: broken.body.error,
    });
    await push(agent.url, await bundle(3, goodFiles("fixed")));
    expect(await status(agent.url)).toMatchObject({ version: 3, lastError: null });
  });

  it("puts the previous files back when the reload fails", async () => {
    const agent = await startTestAgent(() => "exit 3");
    const failing = await push(agent.url, await bundle(1, goodFiles("first")));
    expect(failing.status).toBe(500);
    expect(failing.body.error).toBe(
      "reload failed (exit 3): Command failed: /bin/sh -c exit 3; the previous configuration was restored",
    );
    expect(existsSync(path.join(agent.dir, "haproxy.cfg"))).toBe(false);
    expect(existsSync(path.join(agent.dir, ".agent-state.json"))).toBe(false);
  });
});

describe("haproxy-agent: what haproxy and the reload command may read of its environment", () => {
  // Set in the agent's environment next to its token; none of it may reach haproxy.
  const AGENT_ENV = {
    AGENT_TEST_SECRET: "agent-test-secret-value",
    HOME: "/home/agent-test",
    LANG: "C.UTF-8",
    TZ: "Europe/Zurich",
  };
  const VARIABLES = ["HAPROXY_AGENT_TOKEN", ...Object.keys(AGENT_ENV), "PATH"];

  it("haproxy -c expands ${NAME} in quoted strings to nothing but PATH: its output never carries the token", async () => {
    const agent = await startTestAgent(undefined, AGENT_ENV);
    // haproxy quotes the file name it could not open, as expanded: one probe per variable.
    const probes = VARIABLES.map(
      (name, index) => `    errorfile ${[400, 403, 500, 502, 503, 504][index]} "/nonexistent/${name}=\${${name}}"`,
    );
    const config = `${CONFIG("probes")}${probes.join("\n")}\n`;
    const refused = await push(agent.url, await bundle(1, { ...goodFiles("probes"), "haproxy.cfg": config }));
    expect(refused.status).toBe(422);
    const error = String(refused.body.error);
    expect(error).toMatch(/^haproxy -c failed \(exit 1\): /);
    const opened = [...error.matchAll(/error opening file '([^']*)'/g)].map((match) => match[1]);
    expect(opened).toEqual([
      "/nonexistent/HAPROXY_AGENT_TOKEN=",
      "/nonexistent/AGENT_TEST_SECRET=",
      "/nonexistent/HOME=",
      "/nonexistent/LANG=",
      "/nonexistent/TZ=",
      `/nonexistent/PATH=${process.env.PATH}`,
    ]);
    for (const value of [AGENT_TOKEN, ...Object.values(AGENT_ENV)]) expect(error).not.toContain(value);
    expect(existsSync(path.join(agent.dir, "haproxy.cfg"))).toBe(false);
  });

  it("the reload command gets PATH and nothing of the agent's own environment", async () => {
    const agent = await startTestAgent((dir) => `env > ${dir}/reload-env`, AGENT_ENV);
    expect(await push(agent.url, await bundle(1, goodFiles("env")))).toEqual({
      status: 200,
      body: { outcome: "applied", version: 1 },
    });
    const variables = readFileSync(path.join(agent.dir, "reload-env"), "utf8").split("\n").filter(Boolean);
    // The shell sets PWD (and bash SHLVL and _) itself.
    const fromAgent = variables.filter((line) => !/^(PWD|OLDPWD|SHLVL|_)=/.test(line));
    expect(fromAgent).toEqual([`PATH=${process.env.PATH}`]);
  });

  it("the haproxy a reload starts answers with the variables expanded to nothing; the installed file keeps the text", async () => {
    const port = await freePort();
    const agent = await startTestAgent((dir) => `haproxy -W -D -p ${dir}/haproxy.pid -f ${dir}/haproxy.cfg`, AGENT_ENV);
    const config = [
      ...PREAMBLE,
      `    bind 127.0.0.1:${port}`,
      '    http-request return status 200 content-type text/plain string "token=[${HAPROXY_AGENT_TOKEN}] secret=[${AGENT_TEST_SECRET}]"',
      "",
    ].join("\n");
    expect(await push(agent.url, await bundle(1, { "haproxy.cfg": config }))).toEqual({
      status: 200,
      body: { outcome: "applied", version: 1 },
    });
    const answer = await until(
      "haproxy to answer",
      async () => (await viaHaproxy(port, "any.example")).body || undefined,
      20_000,
    );
    expect(answer).toBe("token=[] secret=[]");
    const installed = readFileSync(path.join(agent.dir, "haproxy.cfg"), "utf8");
    expect(installed).toBe(config);
    expect(installed).not.toContain(AGENT_TOKEN);
  });
});
