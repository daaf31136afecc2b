// The agent's swap when a rename fails (an I/O error, an immutable file), injected through the applier's rename seam:
// at any point of the swap, or while a failed reload's files are put back, the live directory is the previous version
// byte for byte (or the answer names what could not be put back), nothing is reloaded, and the push is refused. And,
// watched through its sync seam, what a swap flushes to the disk before the reload counts on it, and what a push
// answers when the disk refuses a flush.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { rename } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bundleDigest, createApplier } from "../../haproxy-agent/apply.mjs";
import { syncPath } from "../../haproxy-agent/sync-to-disk.mjs";
import { scratchDirs } from "./scratch-dirs";

const tempDir = scratchDirs("agent-swap-");

const v1 = {
  "haproxy.cfg": "global\n# one\n",
  "domain2backend.map": "a.example bk_a\n",
  "crt-list.txt": "certs/site.pem a.example\n",
  "fallback.pem": "fallback one\n",
  "certs/site.pem": "site one\n",
  "certs/old.pem": "old\n",
};
const v2 = {
  "haproxy.cfg": "global\n# two\n",
  "domain2backend.map": "a.example bk_b\n",
  "domain2redirect.map": "b.example https://a.example\n",
  "fallback.pem": "fallback two\n",
  "certs/site.pem": "site two\n",
  "certs/new.pem": "new\n",
};
const bundle = (version: number, files: Record<string, string>, pushId: string) => ({
  version,
  digest: bundleDigest(files),
  onlyIfNewer: false,
  files,
  pushId,
});

/** The managed files of `dir` by bundle path, with their text: what haproxy reads (the agent's dot-files left out). */
function liveFiles(dir: string) {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    if (name.split(path.sep).some((part) => part.startsWith("."))) continue;
    if (statSync(path.join(dir, name)).isFile()) files[name] = readFileSync(path.join(dir, name), "utf8");
  }
  return files;
}

/** A rename that fails with EIO where `fails(from, to)` says so (paths relative to the configuration directory). */
const failingRename =
  (configDir: string, fails: (from: string, to: string) => boolean) => async (from: string, to: string) => {
    if (fails(path.relative(configDir, from), path.relative(configDir, to)))
      throw Object.assign(new Error("EIO: i/o error (injected)"), { code: "EIO" });
    return rename(from, to);
  };

/**
 * An agent that runs version 1, then swaps with `fails` deciding which renames fail; its reload counts itself, and
 * with `failingReload` fails from the second on.
 */
async function agentAtVersion1(fails: (from: string, to: string) => boolean, failingReload = false) {
  const configDir = tempDir();
  const reloads = path.join(tempDir(), "reloads");
  let failing = false;
  const move = failingRename(configDir, (from, to) => failing && fails(from, to));
  const reloadCmd = `echo reload >> ${reloads}${failingReload ? ` && test "$(wc -l < ${reloads})" -eq 1` : ""}`;
  const agent = createApplier({
    configDir,
    reloadCmd,
    haproxy: "true",
    timeoutMs: 10_000,
    log: () => {},
    rename: (from, to) => move(String(from), String(to)),
  });
  expect(await agent.apply(bundle(1, v1, "p-1"))).toEqual({ outcome: "applied", version: 1 });
  failing = true;
  const reloadCount = () =>
    existsSync(reloads) ? readFileSync(reloads, "utf8").split("\n").filter(Boolean).length : 0;
  /** What a failed reload answers: `restored` says what is in force then. */
  const reloadFailed = (restored: string) =>
    `reload failed (exit 1): Command failed: /bin/sh -c ${reloadCmd}; ${restored}`;
  return { configDir, reloadCount, reloadFailed, stopFailing: () => (failing = false), ...agent };
}

const swapFailed = (restored: string) =>
  `version 2 was not applied: its files could not be swapped in (EIO: i/o error (injected)); ${restored}; ` +
  "haproxy was not reloaded";

describe("haproxy-agent: a swap that fails", () => {
  it.each([
    ["a live file moves away", (from: string, to: string) => from === "fallback.pem" && to.startsWith(".previous")],
    [
      "the new haproxy.cfg moves in",
      (from: string, to: string) => from.startsWith(".staging-") && to === "haproxy.cfg",
    ],
    [
      "the new certs move in, the last entry",
      (from: string, to: string) => from.startsWith(".staging-") && to === "certs",
    ],
  ])("puts the previous version back byte for byte when a rename fails as %s", async (_when, fails) => {
    const agent = await agentAtVersion1(fails);
    const message = swapFailed("the previous configuration was restored");
    await expect(agent.apply(bundle(2, v2, "p-2"))).rejects.toMatchObject({ status: 500, message });

    expect(liveFiles(agent.configDir)).toEqual(v1);
    expect(await agent.status()).toEqual({
      version: 1,
      digest: bundleDigest(v1),
      appliedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      diskDigest: bundleDigest(v1),
      lastError: { at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), version: 2, message },
    });
    expect(agent.pushes.get("p-2")).toMatchObject({ version: 2, state: "refused", error: message });
    expect(agent.reloadCount()).toBe(1);
    expect(readdirSync(agent.configDir).filter((name) => name.startsWith(".staging-"))).toEqual([]);

    // Nothing is left half done: the same version, pushed again once the disk takes it, goes through.
    agent.stopFailing();
    expect(await agent.apply(bundle(2, v2, "p-2-again"))).toEqual({ outcome: "applied", version: 2 });
    expect(liveFiles(agent.configDir)).toEqual(v2);
  });

  it("names an entry it could not put back (its previous version kept in .previous), restores the rest", async () => {
    const agent = await agentAtVersion1(
      (from, to) =>
        (from.startsWith(".staging-") && to === "certs") || (from === ".previous/haproxy.cfg" && to === "haproxy.cfg"),
    );
    const message = swapFailed(
      "the previous configuration could not be restored: haproxy.cfg could not be put back " +
        "(the previous version is in .previous)",
    );
    await expect(agent.apply(bundle(2, v2, "p-2"))).rejects.toMatchObject({ status: 500, message });

    // haproxy.cfg is the new one (moved in before certs failed), every other entry the previous one.
    expect(liveFiles(agent.configDir)).toEqual({ ...v1, "haproxy.cfg": v2["haproxy.cfg"] });
    expect(readFileSync(path.join(agent.configDir, ".previous", "haproxy.cfg"), "utf8")).toBe(v1["haproxy.cfg"]);
    expect(agent.pushes.get("p-2")).toMatchObject({ state: "refused", error: message });
    expect(await agent.status()).toMatchObject({ version: 1, lastError: { version: 2, message } });
    expect(agent.reloadCount()).toBe(1);
  });
});

describe("haproxy-agent: a reload that fails", () => {
  it("puts the previous version back byte for byte, the entries the bundle added removed", async () => {
    const agent = await agentAtVersion1(() => false, true);
    await expect(agent.apply(bundle(2, v2, "p-2"))).rejects.toMatchObject({
      status: 500,
      message: agent.reloadFailed("the previous configuration was restored"),
    });
    expect(liveFiles(agent.configDir)).toEqual(v1);
    expect(await agent.status()).toMatchObject({ version: 1, diskDigest: bundleDigest(v1) });
    expect(agent.pushes.get("p-2")).toMatchObject({
      state: "refused",
      error: agent.reloadFailed("the previous configuration was restored"),
    });
  });

  it("puts back every other entry when one cannot be, and names it", async () => {
    const agent = await agentAtVersion1(
      (from, to) => from === ".previous/domain2backend.map" && to === "domain2backend.map",
      true,
    );
    const message = agent.reloadFailed(
      "the previous configuration could not be restored: domain2backend.map could not be put back " +
        "(the previous version is in .previous)",
    );
    await expect(agent.apply(bundle(2, v2, "p-2"))).rejects.toMatchObject({ status: 500, message });
    // Never without haproxy.cfg or certs: all but the one entry are the previous version.
    expect(liveFiles(agent.configDir)).toEqual({ ...v1, "domain2backend.map": v2["domain2backend.map"] });
    expect(agent.pushes.get("p-2")).toMatchObject({ state: "refused", error: message });
  });
});

/**
 * An agent at version 1 whose reload stands in for `systemctl reload haproxy`: it copies haproxy.cfg to what "HAProxy
 * runs"; once `slow()` is called, the copy is left to a step of its own (as systemd goes on with a reload job whose
 * systemctl was killed) 0.3 s later, and the command itself outlives the agent's 1 s time limit.
 */
async function agentWithSlowReload() {
  const configDir = tempDir();
  const base = tempDir();
  const [loaded, slowFlag] = [path.join(base, "loaded.cfg"), path.join(base, "slow")];
  const copy = `cp ${configDir}/haproxy.cfg ${loaded}`;
  const reloadCmd =
    `if [ -e ${slowFlag} ]; then setsid sh -c 'sleep 0.3; ${copy}' </dev/null >/dev/null 2>&1 & sleep 5; ` +
    `else ${copy}; fi`;
  const agent = createApplier({ configDir, reloadCmd, haproxy: "true", timeoutMs: 1000, log: () => {} });
  expect(await agent.apply(bundle(1, v1, "p-1"))).toEqual({ outcome: "applied", version: 1 });
  const runs = () => readFileSync(loaded, "utf8");
  const [slow, fast, forget] = [() => writeFileSync(slowFlag, ""), () => rmSync(slowFlag), () => rmSync(loaded)];
  return { ...agent, configDir, runs, slow, fast, forget };
}

const reloadTimedOut =
  "the reload of version 2 did not finish within 1000 ms and was killed: its files are in place, " +
  "and whether HAProxy runs them is unknown until a later reload";

describe("haproxy-agent: a reload that does not finish in time", () => {
  it("is no refusal: 504 reloadTimedOut, the new files left in place, the push still reloading", async () => {
    const agent = await agentWithSlowReload();
    agent.slow();
    await expect(agent.apply(bundle(2, v2, "p-2"))).rejects.toMatchObject({
      status: 504,
      message: reloadTimedOut,
      extra: { reloadTimedOut: true },
    });
    // Nothing was put back under a reload that may still read the files: the step it left runs version 2.
    expect(liveFiles(agent.configDir)).toEqual(v2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(agent.runs()).toBe(v2["haproxy.cfg"]);
    expect(agent.pushes.get("p-2")).toMatchObject({ version: 2, state: "reloading", error: null });
    expect(await agent.status()).toEqual({
      version: 1,
      digest: bundleDigest(v1),
      appliedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      diskDigest: bundleDigest(v2),
      lastError: { at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), version: 2, message: reloadTimedOut },
    });

    // The previous version pushed again is reloaded, and the push left reloading is settled.
    agent.fast();
    expect(await agent.apply(bundle(3, v1, "p-3"))).toEqual({ outcome: "applied", version: 3 });
    expect(agent.runs()).toBe(v1["haproxy.cfg"]);
    expect(agent.pushes.get("p-2")).toMatchObject({
      state: "refused",
      error:
        "version 2 was not applied: its reload did not finish in time, and version 3, reloaded since, replaced its files",
    });
  });

  it("reloads its files when they are pushed again, though they are on disk already, and settles it as applied", async () => {
    const agent = await agentWithSlowReload();
    agent.slow();
    await expect(agent.apply(bundle(2, v2, "p-2"))).rejects.toMatchObject({ status: 504 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    agent.fast();
    agent.forget();
    expect(await agent.apply(bundle(3, v2, "p-3"))).toEqual({ outcome: "applied", version: 3 });
    // Reloaded (not answered unchanged): what HAProxy runs was copied again.
    expect(agent.runs()).toBe(v2["haproxy.cfg"]);
    expect(agent.pushes.get("p-2")).toMatchObject({ version: 2, state: "applied", error: null });
    expect(await agent.status()).toMatchObject({ version: 3, digest: bundleDigest(v2), lastError: null });
  });
});

describe("haproxy-agent: what a push flushes to the disk", () => {
  it("flushes each staged file and the staging directory before the swap, the live directory before the reload", async () => {
    const configDir = tempDir();
    const reloaded = path.join(tempDir(), "reloaded");
    const events: string[] = [];
    const shown = (file: string) => path.relative(configDir, file).replace(/^\.staging-[^/]+/, "<staging>") || ".";
    const agent = createApplier({
      configDir,
      reloadCmd: `touch ${reloaded}`,
      haproxy: "true",
      timeoutMs: 10_000,
      log: () => {},
      rename: (from, to) => {
        events.push(`move ${shown(String(from))} -> ${shown(String(to))}`);
        return rename(from, to);
      },
      sync: (target) => {
        events.push(`flush ${shown(target)}${existsSync(reloaded) ? " after the reload" : ""}`);
        return syncPath(target);
      },
    });
    await agent.apply(bundle(1, v1, "p-1"));
    rmSync(reloaded);
    events.length = 0;
    expect(await agent.apply(bundle(2, v2, "p-2"))).toEqual({ outcome: "applied", version: 2 });

    const staged = Object.keys(v2).length;
    // The files are flushed a few at a time, in any order.
    expect(events.slice(0, staged).sort()).toEqual(
      Object.keys(v2)
        .map((name) => `flush <staging>/${name}`)
        .sort(),
    );
    expect(events.slice(staged)).toEqual([
      "flush <staging>/certs",
      "flush <staging>",
      // The journal, written whole before the first rename.
      "flush .swap.json.tmp",
      "flush .",
      ...["haproxy.cfg", "domain2backend.map", "crt-list.txt", "fallback.pem", "certs"].map(
        (entry) => `move ${entry} -> .previous/${entry}`,
      ),
      ...["haproxy.cfg", "domain2backend.map", "domain2redirect.map", "fallback.pem", "certs"].map(
        (entry) => `move <staging>/${entry} -> ${entry}`,
      ),
      "flush .",
    ]);
    expect(existsSync(reloaded)).toBe(true);
  });
});

/**
 * An agent that runs version 1, whose flushes then fail with EIO where `fails(target)` says so (paths relative to the
 * configuration directory, the staging directory shown as <staging>); its reload counts itself, its log is kept.
 */
async function agentFlushingBadly(fails: (target: string) => boolean) {
  const configDir = tempDir();
  const reloads = path.join(tempDir(), "reloads");
  const lines: unknown[][] = [];
  let failing = false;
  const agent = createApplier({
    configDir,
    reloadCmd: `echo reload >> ${reloads}`,
    haproxy: "true",
    timeoutMs: 10_000,
    log: (...line: unknown[]) => lines.push(line),
    sync: async (target) => {
      const shown = path.relative(configDir, target).replace(/^\.staging-[^/]+/, "<staging>") || ".";
      if (failing && fails(shown)) throw Object.assign(new Error("EIO: i/o error, fsync (injected)"), { code: "EIO" });
      return syncPath(target);
    },
  });
  expect(await agent.apply(bundle(1, v1, "p-1"))).toEqual({ outcome: "applied", version: 1 });
  failing = true;
  lines.length = 0;
  const reloadCount = () => readFileSync(reloads, "utf8").split("\n").filter(Boolean).length;
  return { configDir, lines, reloadCount, ...agent };
}

describe("haproxy-agent: a disk that refuses a push's flush", () => {
  it.each([
    ["a staged certificate", "<staging>/certs/new.pem"],
    ["the staging directory", "<staging>"],
  ])("answers that %s could not be flushed, the previous configuration untouched", async (_what, failing) => {
    const agent = await agentFlushingBadly((target) => target === failing);
    const message =
      "version 2 was not applied: its files could not be flushed to disk (EIO); " +
      "the previous configuration is still in force; haproxy was not reloaded";
    await expect(agent.apply(bundle(2, v2, "p-2"))).rejects.toMatchObject({ status: 500, message });

    expect(liveFiles(agent.configDir)).toEqual(v1);
    expect(readdirSync(agent.configDir).filter((name) => name.startsWith(".staging-"))).toEqual([]);
    expect(agent.reloadCount()).toBe(1);
    expect(agent.pushes.get("p-2")).toMatchObject({ version: 2, state: "refused", error: message });
    expect(await agent.status()).toMatchObject({
      version: 1,
      diskDigest: bundleDigest(v1),
      lastError: { version: 2, message },
    });
    expect(agent.lines).toEqual([
      [
        "error",
        "haproxy-agent: the staged files could not be flushed to disk, no swap",
        { version: 2, error: "Error: EIO: i/o error, fsync (injected)" },
      ],
    ]);
  });

  it("applies a push whose journal's directory could not be flushed, and logs it", async () => {
    let flushes = 0;
    const agent = await agentFlushingBadly((target) => target === "." && ++flushes === 1);
    expect(await agent.apply(bundle(2, v2, "p-2"))).toEqual({ outcome: "applied", version: 2 });

    expect(liveFiles(agent.configDir)).toEqual(v2);
    expect(agent.lines).toEqual([
      [
        "warn",
        "haproxy-agent: a record was written, but its directory could not be flushed",
        { file: path.join(agent.configDir, ".swap.json"), error: "Error: EIO: i/o error, fsync (injected)" },
      ],
      ["info", "haproxy-agent: applied", { version: 2, digest: bundleDigest(v2) }],
    ]);
  });

  it("answers that the configuration directory could not be flushed after the swap, the previous files back", async () => {
    const agent = await agentFlushingBadly((target) => target === ".");
    const message =
      "version 2 was not applied: the configuration directory could not be flushed to disk after the swap (EIO); " +
      "the previous configuration was restored; haproxy was not reloaded";
    await expect(agent.apply(bundle(2, v2, "p-2"))).rejects.toMatchObject({ status: 500, message });

    expect(liveFiles(agent.configDir)).toEqual(v1);
    expect(agent.reloadCount()).toBe(1);
    expect(agent.pushes.get("p-2")).toMatchObject({ version: 2, state: "refused", error: message });
    expect(await agent.status()).toMatchObject({ version: 1, lastError: { version: 2, message } });
  });
});
