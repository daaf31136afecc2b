// The agent stopped and started again: SIGTERM lets the push whose reload has started end and stops the others before
// theirs; a start settles what a run that died left in progress (a push reloading or received, scratch directories
// that can hold private keys), so that no push answers in progress for good.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bundleDigest, createApplier } from "../../haproxy-agent/apply.mjs";
import { createPushLog } from "../../haproxy-agent/pushes.mjs";
import { settlePushes } from "../../haproxy-agent/restart.mjs";
import { createStateRecord } from "../../haproxy-agent/state.mjs";
import { authorization, processGone, startAgent, stopAgents, until } from "./agent-process";
import { scratchDirs } from "./scratch-dirs";

const tempDir = scratchDirs("agent-restart-");
// Registered after the directories' removal, so run before it: no agent is left writing into a removed directory.
afterEach(stopAgents);

const files = (version: number) => ({
  "haproxy.cfg": `global\n# v${version}\n`,
  "certs/site.pem": `site ${version}\n`,
});
const bundle = (version: number, pushId: string) => ({
  version,
  digest: bundleDigest(files(version)),
  onlyIfNewer: false,
  files: files(version),
  pushId,
});

/**
 * Programs that mark when they start (`checking`, `reloading`) and count the reloads that end, in a directory; the
 * check leaves its process id (the sleep it becomes) in check.pid before it marks its start.
 */
function tools(checkSeconds: number, reloadSeconds: number) {
  const dir = tempDir();
  const haproxy = path.join(dir, "haproxy");
  writeFileSync(haproxy, `#!/bin/sh\necho $$ > ${dir}/check.pid\ntouch ${dir}/checking\nexec sleep ${checkSeconds}\n`);
  chmodSync(haproxy, 0o755);
  const reloadCmd = `touch ${dir}/reloading; sleep ${reloadSeconds}; echo reload >> ${dir}/reloads`;
  const reloads = () => (existsSync(`${dir}/reloads`) ? readFileSync(`${dir}/reloads`, "utf8") : "");
  const started = (what: "checking" | "reloading") => () => existsSync(path.join(dir, what));
  const checkPid = () => Number(readFileSync(path.join(dir, "check.pid"), "utf8"));
  return { haproxy, reloadCmd, reloads, started, checkPid };
}

/** An applier in a fresh directory that runs these programs, each within `timeoutMs`. */
const applierOf = (programs: ReturnType<typeof tools>, timeoutMs: number) =>
  createApplier({
    configDir: tempDir(),
    haproxy: programs.haproxy,
    reloadCmd: programs.reloadCmd,
    timeoutMs,
    log: () => {},
  });

/** The configuration directory after a push of files(n): its records, the files and the version before (no scratch). */
const AFTER_A_PUSH = [".agent-pushes.json", ".agent-state.json", ".previous", "certs", "haproxy.cfg"];

const stoppedBefore = (version: number) => `version ${version} was not applied: the agent stopped before the reload`;

describe("haproxy-agent: stopping", () => {
  it("on SIGTERM takes no new connection, ends the push reloading, records it and exits 0", async () => {
    const configDir = tempDir();
    const programs = tools(0, 1);
    const agent = await startAgent(configDir, { haproxy: programs.haproxy, reloadCmd: programs.reloadCmd });
    const push = fetch(`${agent.url}/v1/config`, {
      method: "PUT",
      headers: { ...authorization, "Content-Type": "application/json" },
      body: JSON.stringify({ ...bundle(3, "p-3"), timeoutMs: 60_000 }),
    });
    await until(programs.started("reloading"));
    agent.child.kill("SIGTERM");
    await agent.logged("SIGTERM received");
    await expect(fetch(`${agent.url}/healthz`)).rejects.toMatchObject({ cause: { code: "ECONNREFUSED" } });

    const answer = await push;
    expect({ status: answer.status, body: await answer.json() }).toEqual({
      status: 200,
      body: { outcome: "applied", version: 3 },
    });
    expect(await agent.exited).toBe(0);
    expect(programs.reloads()).toBe("reload\n");
    expect(JSON.parse(readFileSync(path.join(configDir, ".agent-pushes.json"), "utf8"))).toEqual([
      { pushId: "p-3", version: 3, state: "applied", error: null, at: expect.any(String) },
    ]);
    expect(readdirSync(configDir).sort()).toEqual(AFTER_A_PUSH);
  });

  it("on SIGTERM exits only once the push reloading has ended and is recorded, its client gone", async () => {
    const configDir = tempDir();
    const programs = tools(0, 1);
    const agent = await startAgent(configDir, { haproxy: programs.haproxy, reloadCmd: programs.reloadCmd });
    const client = new AbortController();
    const push = fetch(`${agent.url}/v1/config`, {
      method: "PUT",
      headers: { ...authorization, "Content-Type": "application/json" },
      body: JSON.stringify(bundle(3, "p-3")),
      signal: client.signal,
    });
    await until(programs.started("reloading"));
    client.abort();
    await expect(push).rejects.toMatchObject({ name: "AbortError" });
    agent.child.kill("SIGTERM");

    expect(await agent.exited).toBe(0);
    expect(programs.reloads()).toBe("reload\n");
    expect(JSON.parse(readFileSync(path.join(configDir, ".agent-pushes.json"), "utf8"))).toEqual([
      { pushId: "p-3", version: 3, state: "applied", error: null, at: expect.any(String) },
    ]);
    expect(JSON.parse(readFileSync(path.join(configDir, ".agent-state.json"), "utf8"))).toMatchObject({ version: 3 });
  });

  it("stops the pushes queued behind the one reloading and any that arrives later, before their reload", async () => {
    const programs = tools(0, 0.3);
    const agent = applierOf(programs, 10_000);
    const reloading = agent.apply(bundle(1, "p-1"));
    const queued = agent.apply(bundle(2, "p-2"));
    await until(programs.started("reloading"));
    await agent.stop();
    expect(agent.pushes.get("p-1")).toMatchObject({ version: 1, state: "applied", error: null });
    expect(agent.pushes.get("p-2")).toMatchObject({ version: 2, state: "abandoned", error: stoppedBefore(2) });
    expect(await reloading).toEqual({ outcome: "applied", version: 1 });
    await expect(queued).rejects.toMatchObject({ status: 410, message: stoppedBefore(2) });
    await expect(agent.apply(bundle(3, "p-3"))).rejects.toMatchObject({ status: 410, message: stoppedBefore(3) });
    expect(programs.reloads()).toBe("reload\n");
    expect(await agent.status()).toMatchObject({ version: 1, diskDigest: bundleDigest(files(1)) });
  });

  it("on SIGTERM stops a POST /v1/check under way: 503 agentStopping, its process killed, and exits at once", async () => {
    const programs = tools(20, 0);
    const agent = await startAgent(tempDir(), { haproxy: programs.haproxy, args: ["--timeout", "30"] });
    const check = fetch(`${agent.url}/v1/check`, {
      method: "POST",
      headers: { ...authorization, "Content-Type": "application/json" },
      body: JSON.stringify({ digest: bundleDigest(files(1)), files: files(1) }),
    });
    await until(programs.started("checking"));
    const stoppedAt = Date.now();
    agent.child.kill("SIGTERM");

    const answer = await check;
    expect({ status: answer.status, body: await answer.json() }).toEqual({
      status: 503,
      body: { error: "the check was stopped: the agent is stopping", agentStopping: true },
    });
    expect(await agent.exited).toBe(0);
    // Not the 20 s the check would take, nor the 30 s --timeout (the margin is for a loaded machine).
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(processGone(programs.checkPid())).toBe(true);
  });

  it("kills a haproxy -c under way rather than wait for it", async () => {
    const programs = tools(20, 0);
    const agent = applierOf(programs, 30_000);
    const checking = agent.apply(bundle(1, "p-1"));
    await until(programs.started("checking"));
    // Waiting out the 20 s check would run past the test's time limit; the check's process must be gone.
    await agent.stop();
    await expect(checking).rejects.toMatchObject({ status: 410, message: stoppedBefore(1) });
    expect(processGone(programs.checkPid())).toBe(true);
    expect(programs.reloads()).toBe("");
  });
});

/** A configuration directory as a run killed during the reload of version 2 leaves it, its files `live` in place. */
function leftByADeadRun(live: Record<string, string>) {
  const configDir = tempDir();
  for (const [name, text] of Object.entries(live)) {
    mkdirSync(path.dirname(path.join(configDir, name)), { recursive: true });
    writeFileSync(path.join(configDir, name), text);
  }
  const state = { version: 1, digest: bundleDigest(files(1)), appliedAt: "2030-01-01T00:00:00.000Z" };
  writeFileSync(path.join(configDir, ".agent-state.json"), JSON.stringify(state));
  const record = (pushId: string, version: number, state: string, extra = {}) => ({
    pushId,
    version,
    state,
    error: null,
    at: "2030-01-02T00:00:00.000Z",
    ...extra,
  });
  const pushes = [
    record("p-1", 1, "applied"),
    record("p-2", 2, "reloading", { digest: bundleDigest(files(2)) }),
    record("p-3", 3, "received"),
  ];
  writeFileSync(path.join(configDir, ".agent-pushes.json"), JSON.stringify(pushes));
  mkdirSync(path.join(configDir, ".staging-3-0a1b2c3d", "certs"), { recursive: true });
  writeFileSync(path.join(configDir, ".staging-3-0a1b2c3d", "certs", "site.pem"), "a private key\n");
  mkdirSync(path.join(configDir, ".check-4e5f6a7b"));
  mkdirSync(path.join(configDir, ".previous"));
  writeFileSync(path.join(configDir, ".previous", "haproxy.cfg"), files(1)["haproxy.cfg"]);
  return configDir;
}

describe("haproxy-agent: starting after a run that died mid-push", () => {
  it("answers a push left reloading whose files are in place as applied, its version in force", async () => {
    const configDir = leftByADeadRun(files(2));
    const agent = await startAgent(configDir, {});
    const get = async (pathName: string) => {
      const response = await fetch(`${agent.url}${pathName}`, { headers: authorization });
      return { status: response.status, body: await response.json() };
    };
    expect(await get("/v1/pushes/p-2")).toEqual({
      status: 200,
      body: { pushId: "p-2", version: 2, state: "applied", error: null, at: expect.any(String) },
    });
    expect(await get("/v1/pushes/p-3")).toEqual({
      status: 200,
      body: { pushId: "p-3", version: 3, state: "abandoned", error: stoppedBefore(3), at: expect.any(String) },
    });
    expect(await get("/v1/pushes/p-1")).toEqual({
      status: 200,
      body: { pushId: "p-1", version: 1, state: "applied", error: null, at: "2030-01-02T00:00:00.000Z" },
    });
    expect(await get("/v1/status")).toEqual({
      status: 200,
      body: {
        version: 2,
        digest: bundleDigest(files(2)),
        appliedAt: "2030-01-02T00:00:00.000Z",
        diskDigest: bundleDigest(files(2)),
        lastError: null,
      },
    });
    // The scratch directories are gone; the previous files stay in .previous, as after any push.
    expect(readdirSync(configDir).sort()).toEqual(AFTER_A_PUSH);
  });

  it("removes the temporary file of a swap's journal whose write was cut short, and logs it", async () => {
    const configDir = leftByADeadRun(files(2));
    writeFileSync(path.join(configDir, ".swap.json.tmp"), '{"pushId":"p-');
    const lines: unknown[][] = [];
    const log = (...line: unknown[]) => lines.push(line);
    const agent = createApplier({ configDir, reloadCmd: "true", haproxy: "true", timeoutMs: 10_000, log });
    await agent.start();
    expect(lines[0]).toEqual([
      "info",
      "haproxy-agent: scratch directories of the previous run removed",
      { removed: expect.arrayContaining([".check-4e5f6a7b", ".staging-3-0a1b2c3d", ".swap.json.tmp"]) },
    ]);
    expect((lines[0][2] as { removed: string[] }).removed).toHaveLength(3);
    expect(readdirSync(configDir).sort()).toEqual(AFTER_A_PUSH);
  });

  it("records a push left reloading whose files are not in place as refused, the version before in force", async () => {
    const configDir = leftByADeadRun(files(1));
    const agent = createApplier({ configDir, reloadCmd: "true", haproxy: "true", timeoutMs: 10_000, log: () => {} });
    await agent.start();
    expect(await agent.pushes.abandon("p-2")).toEqual({
      pushId: "p-2",
      version: 2,
      state: "refused",
      error:
        "version 2 was not applied: the agent stopped during its reload and, restarted, found other files in place",
      at: expect.any(String),
    });
    expect(await agent.status()).toMatchObject({ version: 1, diskDigest: bundleDigest(files(1)), lastError: null });

    // On disk: started again, it answers the same.
    const again = createApplier({ configDir, reloadCmd: "true", haproxy: "true", timeoutMs: 10_000, log: () => {} });
    await again.start();
    expect(again.pushes.get("p-2")).toMatchObject({ state: "refused" });
    expect(again.pushes.get("p-3")).toMatchObject({ state: "abandoned" });
  });
});

describe("haproxy-agent: starting after a run killed during its swap or before its reload", () => {
  const filesOf = (version: number) => ({
    "haproxy.cfg": `global\n# v${version}\n`,
    "domain2backend.map": `a.example bk_${version}\n`,
    "certs/site.pem": `site ${version}\n`,
  });
  /**
   * The configuration directory and the reloads' count a child agent left, killed pushing version 2 (`when`), and an
   * agent to start there, whose reload `fails` (exit 3) if told to.
   */
  function killedPushing(when: string, fails = false) {
    const [configDir, reloads] = [tempDir(), path.join(tempDir(), "reloads")];
    const child = spawnSync(process.execPath, [
      path.join(import.meta.dirname, "die-mid-push.mjs"),
      configDir,
      reloads,
      when,
    ]);
    expect(child.signal).toBe("SIGKILL");
    const reloadLines = () => readFileSync(reloads, "utf8").split("\n").filter(Boolean);
    const reloadCount = () => reloadLines().length;
    const agent = createApplier({
      configDir,
      // Each reload notes the haproxy.cfg it found: "reload # v1".
      reloadCmd: `echo reload $(tail -n 1 ${configDir}/haproxy.cfg) >> ${reloads}${fails ? "; echo '[ALERT] bad config' >&2; exit 3" : ""}`,
      haproxy: "true",
      timeoutMs: 10_000,
      log: () => {},
    });
    return { configDir, reloadCount, reloadLines, agent };
  }
  const managed = (configDir: string) =>
    Object.fromEntries(
      Object.keys(filesOf(1))
        .filter((name) => existsSync(path.join(configDir, name)))
        .map((name) => [name, readFileSync(path.join(configDir, name), "utf8")]),
    );

  it.each([
    ["its first rename (haproxy.cfg moved away, nothing in)", "1"],
    ["the new haproxy.cfg moved in, the old map and certs still away", "4"],
  ])(
    "puts the previous files back whole when killed after %s, then reloads them; the push refused",
    async (_, moves) => {
      const { configDir, reloadCount, reloadLines, agent } = killedPushing(moves);
      await agent.start();
      expect(managed(configDir)).toEqual(filesOf(1));
      expect(existsSync(path.join(configDir, ".swap.json"))).toBe(false);
      expect(agent.pushes.get("p-2")).toMatchObject({
        state: "refused",
        error:
          "version 2 was not applied: the agent stopped during its swap and, restarted, put the previous files back; " +
          "haproxy was reloaded on them",
      });
      expect(await agent.status()).toMatchObject({ version: 1, diskDigest: bundleDigest(filesOf(1)) });
      // HAProxy, maybe started on a mix of old and new files (at boot, before the agent), reloads the old ones whole.
      expect(reloadCount()).toBe(2);
      expect(reloadLines().at(-1)).toBe("reload # v1");
    },
  );

  it("says the reload of the previous files put back failed, when it does", async () => {
    const { configDir, reloadCount, agent } = killedPushing("4", true);
    await agent.start();
    expect(managed(configDir)).toEqual(filesOf(1));
    expect(reloadCount()).toBe(2);
    expect(agent.pushes.get("p-2")).toMatchObject({
      state: "refused",
      error:
        "version 2 was not applied: the agent stopped during its swap and, restarted, put the previous files back; " +
        "their reload failed (exit 3): [ALERT] bad config",
    });
  });

  it("reloads the files swapped in before answering the push applied, when killed before its reload", async () => {
    const { configDir, reloadCount, agent } = killedPushing("reload");
    expect(reloadCount()).toBe(1);
    await agent.start();
    expect(reloadCount()).toBe(2);
    expect(managed(configDir)).toEqual(filesOf(2));
    expect(existsSync(path.join(configDir, ".swap.json"))).toBe(false);
    expect(agent.pushes.get("p-2")).toMatchObject({ state: "applied", error: null });
    expect(await agent.status()).toMatchObject({
      version: 2,
      digest: bundleDigest(filesOf(2)),
      diskDigest: bundleDigest(filesOf(2)),
    });
  });

  it("puts the previous files back when the reload at start of the files swapped in fails; the push refused", async () => {
    const { configDir, reloadCount, agent } = killedPushing("reload", true);
    await agent.start();
    // The failed reload is not run again for the previous files, as after a run's failed reload.
    expect(reloadCount()).toBe(2);
    expect(managed(configDir)).toEqual(filesOf(1));
    expect(existsSync(path.join(configDir, ".swap.json"))).toBe(false);
    expect(agent.pushes.get("p-2")).toEqual({
      pushId: "p-2",
      version: 2,
      state: "refused",
      at: expect.any(String),
      error:
        "version 2 was not applied: restarted, the agent reloaded its files, which are in place, and the reload " +
        "failed (exit 3): [ALERT] bad config; the previous configuration was restored",
    });
    expect(await agent.status()).toMatchObject({ version: 1, diskDigest: bundleDigest(filesOf(1)) });
  });
});

describe("haproxy-agent: settling at start", () => {
  /** settlePushes on `configDir` as a start runs it, with the directories it hashed. */
  async function settle(configDir: string) {
    const log = () => {};
    const pushes = createPushLog({ configDir, log });
    await pushes.load();
    const hashed: string[] = [];
    const digestOf = async (dir: string) => {
      hashed.push(dir);
      return bundleDigest(files(2));
    };
    const reload = async () => ({ code: 0, output: "", timedOut: false });
    await settlePushes({ configDir, pushes, record: createStateRecord({ configDir, log }), log, reload, digestOf });
    return { hashed, pushes };
  }

  it("hashes the files on disk once when pushes are left in progress", async () => {
    const configDir = leftByADeadRun(files(2));
    const { hashed, pushes } = await settle(configDir);
    expect(hashed).toEqual([configDir]);
    expect(pushes.inProgress()).toEqual([]);
  });

  it("does not hash the files on disk when no push is left in progress", async () => {
    const configDir = tempDir();
    writeFileSync(path.join(configDir, "haproxy.cfg"), files(2)["haproxy.cfg"]);
    expect((await settle(configDir)).hashed).toEqual([]);
  });
});
