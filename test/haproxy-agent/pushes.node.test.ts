// The agent's push log in plain Node: each push id's outcome, the abandon that stops a push before its reload (or
// before it arrives), the commit that keeps the outcome in step with the status, the client that goes away, the control
// plane's time limit, replays, the bound and the restart.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bundleDigest, createApplier } from "../../haproxy-agent/apply.mjs";
import { createPushLog, MAX_PUSHES } from "../../haproxy-agent/pushes.mjs";
import { processGone, until } from "./agent-process";
import { scratchDirs } from "./scratch-dirs";

const quiet = () => {};
const tempDir = scratchDirs("agent-pushes-");

const files = (marker: string) => ({ "haproxy.cfg": `global\n# ${marker}\n` });
const bundle = (version: number, pushId: string, extra: { timeoutMs?: number } = {}) => ({
  version,
  digest: bundleDigest(files(`v${version}`)),
  onlyIfNewer: false,
  files: files(`v${version}`),
  pushId,
  ...extra,
});

/**
 * An applier whose `haproxy -c` takes `checkSeconds` and whose reload takes `reloadSeconds` and counts itself. The
 * step named by `hold` marks its start and then waits for `release`, so a test acts while it runs, however slow the
 * machine.
 */
function applier(
  options: { checkSeconds?: number; reloadSeconds?: number; reloadCmd?: string; hold?: "check" | "reload" } = {},
) {
  const configDir = tempDir();
  const tools = tempDir();
  const held = (step: string) =>
    `touch ${tools}/${step}-started; while [ ! -e ${tools}/${step}-go ]; do sleep 0.02; done`;
  const haproxy = path.join(tools, "haproxy");
  const check =
    options.hold === "check" ? held("check") : `touch ${tools}/check-started; exec sleep ${options.checkSeconds ?? 0}`;
  // The check's process id (the sleep it becomes) is written before it marks its start.
  writeFileSync(haproxy, `#!/bin/sh\necho $$ > ${tools}/check.pid\n${check}\n`);
  chmodSync(haproxy, 0o755);
  const reloads = path.join(tools, "reloads");
  const reload = `sleep ${options.reloadSeconds ?? 0}; echo reload >> ${reloads}`;
  const created = createApplier({
    configDir,
    reloadCmd: options.reloadCmd ?? (options.hold === "reload" ? `${held("reload")}; ${reload}` : reload),
    haproxy,
    timeoutMs: 10_000,
    log: quiet,
  });
  const reloadCount = () =>
    existsSync(reloads) ? readFileSync(reloads, "utf8").split("\n").filter(Boolean).length : 0;
  const started = (step: "check" | "reload") => () => existsSync(path.join(tools, `${step}-started`));
  const release = (step: "check" | "reload") => writeFileSync(path.join(tools, `${step}-go`), "");
  const checkPid = () => Number(readFileSync(path.join(tools, "check.pid"), "utf8"));
  return { configDir, reloadCount, started, release, checkPid, ...created };
}

describe("haproxy-agent: the outcome of each push id", () => {
  it("remembers an applied push; abandoning it afterwards changes nothing", async () => {
    const agent = applier();
    expect(await agent.apply(bundle(1, "p-1"))).toEqual({ outcome: "applied", version: 1 });
    expect(await agent.pushes.abandon("p-1")).toMatchObject({
      pushId: "p-1",
      version: 1,
      state: "applied",
      error: null,
    });
    expect(agent.reloadCount()).toBe(1);
  });

  it("answers a repeated push id with its outcome and reloads once", async () => {
    const agent = applier();
    await agent.apply(bundle(1, "p-twice"));
    expect(await agent.apply(bundle(1, "p-twice"))).toEqual({ outcome: "applied", version: 1 });
    expect(agent.reloadCount()).toBe(1);
  });

  it("never applies a push given up before it arrived", async () => {
    const agent = applier();
    expect(await agent.pushes.abandon("p-late")).toMatchObject({ pushId: "p-late", version: null, state: "abandoned" });
    await expect(agent.apply(bundle(1, "p-late"))).rejects.toMatchObject({
      status: 410,
      message: "version 1 was not applied: given up by the control plane before its reload",
    });
    expect(agent.reloadCount()).toBe(0);
    expect(existsSync(path.join(agent.configDir, "haproxy.cfg"))).toBe(false);
    expect((await agent.status()).lastError).toBeNull();
  });

  it("stops a push given up while haproxy -c runs, and one queued behind it", async () => {
    const agent = applier({ hold: "check" });
    const first = agent.apply(bundle(1, "p-checking"));
    const second = agent.apply(bundle(2, "p-queued"));
    await until(agent.started("check"));
    expect(await agent.pushes.abandon("p-checking")).toMatchObject({ state: "abandoned", version: 1 });
    expect(await agent.pushes.abandon("p-queued")).toMatchObject({ state: "abandoned", version: 2 });
    agent.release("check");
    await expect(first).rejects.toMatchObject({
      status: 410,
      message: "version 1 was not applied: the control plane gave it up before the reload",
    });
    await expect(second).rejects.toMatchObject({ status: 410 });
    expect(agent.reloadCount()).toBe(0);
    expect(agent.pushes.get("p-checking")).toMatchObject({ state: "abandoned" });
  });

  it("stops a push whose client went away before the reload, killing its haproxy -c", async () => {
    // Waiting out the 30 s check would run past the test's time limit; the check's process must be gone.
    const agent = applier({ checkSeconds: 30 });
    const gone = new AbortController();
    const pushed = agent.apply(bundle(1, "p-gone"), gone.signal);
    await until(agent.started("check"));
    gone.abort();
    await expect(pushed).rejects.toMatchObject({
      status: 410,
      message: "version 1 was not applied: the control plane went away before the reload",
    });
    expect(processGone(agent.checkPid())).toBe(true);
    expect(agent.reloadCount()).toBe(0);
    expect(await agent.pushes.abandon("p-gone")).toMatchObject({ state: "abandoned", version: 1 });
  });

  it("finishes a push whose reload started: an abandon then answers reloading, and later applied", async () => {
    const agent = applier({ hold: "reload" });
    const pushed = agent.apply(bundle(1, "p-reloading"));
    await until(agent.started("reload"));
    expect(await agent.pushes.abandon("p-reloading")).toMatchObject({ state: "reloading", version: 1 });
    agent.release("reload");
    expect(await pushed).toEqual({ outcome: "applied", version: 1 });
    expect(await agent.pushes.abandon("p-reloading")).toMatchObject({ state: "applied" });
    expect(agent.reloadCount()).toBe(1);
  });

  it("answers a push repeated during its reload with its outcome, reloading once; abandon says reloading", async () => {
    const agent = applier({ reloadSeconds: 0.4 });
    const first = agent.apply(bundle(1, "p-repeated"));
    await until(() => agent.pushes.get("p-repeated")?.state === "reloading");
    const repeated = agent.apply(bundle(1, "p-repeated"));
    expect(agent.pushes.get("p-repeated")).toMatchObject({ version: 1, state: "reloading" });
    expect(await agent.pushes.abandon("p-repeated")).toMatchObject({ version: 1, state: "reloading", error: null });
    expect(await first).toEqual({ outcome: "applied", version: 1 });
    expect(await repeated).toEqual({ outcome: "applied", version: 1 });
    expect(agent.pushes.get("p-repeated")).toMatchObject({ version: 1, state: "applied", error: null });
    expect(agent.reloadCount()).toBe(1);
  });

  it("answers a push repeated during its check as the push itself ends: abandoned meanwhile, both 410", async () => {
    const agent = applier({ checkSeconds: 0.4 });
    const first = agent.apply(bundle(1, "p-repeated"));
    const repeated = agent.apply(bundle(1, "p-repeated"));
    expect(await agent.pushes.abandon("p-repeated")).toMatchObject({ version: 1, state: "abandoned" });
    const message = "version 1 was not applied: the control plane gave it up before the reload";
    await expect(first).rejects.toMatchObject({ status: 410, message });
    await expect(repeated).rejects.toMatchObject({ status: 410, message });
    expect(agent.pushes.get("p-repeated")).toMatchObject({ state: "abandoned", error: message });
    expect(agent.reloadCount()).toBe(0);
  });

  it("stops an unchanged push given up while its files were compared: abandoned, not unchanged", async () => {
    let abandonNow = false;
    const configDir = tempDir();
    const agent = createApplier({
      configDir,
      reloadCmd: "true",
      haproxy: "true",
      timeoutMs: 10_000,
      log: quiet,
      // The abandon arrives after the digest of the files on disk matched, just before the outcome is committed.
      beforeUnchanged: async () => {
        if (abandonNow) expect(await agent.pushes.abandon("p-same")).toMatchObject({ state: "abandoned", version: 1 });
      },
    });
    expect(await agent.apply(bundle(1, "p-1"))).toEqual({ outcome: "applied", version: 1 });
    abandonNow = true;
    const message = "version 1 was not applied: the control plane gave it up before the reload";
    await expect(agent.apply(bundle(1, "p-same"))).rejects.toMatchObject({
      status: 410,
      message,
    });
    expect(agent.pushes.get("p-same")).toMatchObject({ version: 1, state: "abandoned", error: message });
    expect(await agent.pushes.abandon("p-same")).toMatchObject({ state: "abandoned", error: message });
    // Its record was not committed: the status is the first push's, with no error.
    const first = await agent.readState();
    expect(await agent.status()).toMatchObject({ version: 1, appliedAt: first?.appliedAt, lastError: null });
    // The push log on disk says so too.
    const restarted = createPushLog({ configDir, log: quiet });
    await restarted.load();
    expect(restarted.get("p-same")).toMatchObject({ state: "abandoned", error: message });
  });

  it("answers a push's outcome only after the commit that shows its version: never reloading then", async () => {
    const agent = applier({ reloadSeconds: 0.2 });
    const pushed = agent.apply(bundle(1, "p-commit"));
    const stateFile = path.join(agent.configDir, ".agent-state.json");
    // The moment the commit starts (the state file appears), the way GET /v1/pushes/{id} reads the outcome.
    while (!existsSync(stateFile)) await new Promise((resolve) => setImmediate(resolve));
    await agent.committed();
    expect(agent.pushes.get("p-commit")).toMatchObject({ state: "applied", version: 1 });
    expect(await agent.status()).toMatchObject({ version: 1 });
    expect(await pushed).toEqual({ outcome: "applied", version: 1 });
  });

  it("does not start a reload that could not end within the control plane's time limit", async () => {
    // The agent's reload may take 10 s; the control plane waits 10.3 s: after the 0.5 s check no reload may start.
    const agent = applier({ checkSeconds: 0.5 });
    await expect(agent.apply(bundle(1, "p-short", { timeoutMs: 10_300 }))).rejects.toMatchObject({
      status: 410,
      message: "version 1 was not applied: a reload started now could not end within the control plane's 10300 ms",
    });
    expect(agent.reloadCount()).toBe(0);
  });

  it("with misaligned time limits applies anyway, and warns", async () => {
    const lines: unknown[][] = [];
    const agent = createApplier({
      configDir: tempDir(),
      reloadCmd: "true",
      haproxy: "true",
      timeoutMs: 10_000,
      log: (...line: unknown[]) => lines.push(line),
    });
    expect(await agent.apply(bundle(1, "p-misaligned", { timeoutMs: 3000 }))).toEqual({
      outcome: "applied",
      version: 1,
    });
    expect(lines[0]).toEqual([
      "warn",
      "haproxy-agent: the control plane waits no longer than a check and a reload may take",
      { controlPlaneMs: 3000, checkPlusReloadMs: 20_000, advice: "set HAPROXY_AGENT_TIMEOUT above twice --timeout" },
    ]);
  });

  it("records a refusal with its error", async () => {
    const refusing = applier({ reloadCmd: "exit 3" });
    await expect(refusing.apply(bundle(1, "p-refused"))).rejects.toMatchObject({ status: 500 });
    expect(await refusing.pushes.abandon("p-refused")).toMatchObject({
      state: "refused",
      error: expect.stringMatching(/^reload failed \(exit 3\)/),
    });
  });
});

describe("haproxy-agent: the push log's bound and its file", () => {
  // 1005 records, each written whole and flushed to disk: 1.8 to 3.8 s in CI, past 5 s on a loaded machine.
  it(`keeps the last ${MAX_PUSHES} ids, on disk, through a restart`, async () => {
    const configDir = tempDir();
    const log = createPushLog({ configDir, log: quiet });
    for (let index = 1; index <= MAX_PUSHES + 5; index++) await log.record(`p-${index}`, index, "applied");
    expect(log.get("p-5")).toBeUndefined();
    expect(log.get("p-6")).toMatchObject({ version: 6, state: "applied" });

    const restarted = createPushLog({ configDir, log: quiet });
    await restarted.load();
    expect(restarted.get("p-5")).toBeUndefined();
    expect(restarted.get("p-6")).toMatchObject({ version: 6, state: "applied" });
    expect(restarted.get(`p-${MAX_PUSHES + 5}`)).toMatchObject({ version: MAX_PUSHES + 5, state: "applied" });
    // A forgotten id is unknown: abandoning it remembers it as abandoned.
    expect(await restarted.abandon("p-1")).toMatchObject({ state: "abandoned", version: null });
  }, 30_000);

  it("keeps a merely received push in memory only: after a restart it is unknown, and abandoned if asked", async () => {
    const configDir = tempDir();
    const log = createPushLog({ configDir, log: quiet });
    await log.record("p-received", 1, "received");
    const restarted = createPushLog({ configDir, log: quiet });
    await restarted.load();
    expect(restarted.get("p-received")).toBeUndefined();
    // Asked, the restarted agent abandons it (its version unknown), for good: a later start still says so.
    const abandoned = {
      pushId: "p-received",
      version: null,
      state: "abandoned",
      error: "given up by the control plane before its reload",
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    };
    expect(await restarted.abandon("p-received")).toEqual(abandoned);
    const again = createPushLog({ configDir, log: quiet });
    await again.load();
    expect(again.get("p-received")).toEqual(abandoned);
  });
});
