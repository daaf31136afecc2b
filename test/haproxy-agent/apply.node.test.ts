// The environment the HAProxy agent gives `haproxy -c` and the reload command: PATH and nothing else, so that HAProxy's
// `${NAME}` expansion in a pushed configuration cannot read the agent's token or any other variable. And, with stand-ins
// for haproxy and the reload, what its status tells (the digest recomputed from the disk, the last failure) and the
// check that applies nothing.
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bundleDigest, childEnvironment, createApplier, parseCheck } from "../../haproxy-agent/apply.mjs";

describe("childEnvironment", () => {
  it("keeps the agent's PATH and drops everything else, the token first", () => {
    const agent = {
      PATH: "/opt/haproxy/sbin:/usr/bin:/bin",
      HAPROXY_AGENT_TOKEN: "agent-token",
      HOME: "/home/agent",
      LANG: "C.UTF-8",
      TZ: "Europe/Zurich",
      AWS_SECRET_ACCESS_KEY: "secret",
    };
    expect(childEnvironment(agent)).toEqual({ PATH: "/opt/haproxy/sbin:/usr/bin:/bin" });
  });

  it("falls back to the system directories when the agent runs without PATH (or with an empty one)", () => {
    const system = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" };
    expect(childEnvironment({ HAPROXY_AGENT_TOKEN: "agent-token" })).toEqual(system);
    expect(childEnvironment({ PATH: "" })).toEqual(system);
  });
});

describe("the applier's status and check", () => {
  const quiet = () => {};
  const files = (marker: string) => ({
    "haproxy.cfg": `global\n# ${marker}\n`,
    "domain2backend.map": "a.example bk_default\n",
    "fallback.pem": "fallback\n",
    "certs/site.pem": "site\n",
  });
  const bundle = (version: number, content: Record<string, string>) => ({
    version,
    digest: bundleDigest(content),
    onlyIfNewer: false,
    files: content,
  });
  const agentOptions = { reloadCmd: "true", haproxy: "true", timeoutMs: 10_000, log: quiet };
  /** An applier on a fresh directory; `haproxy` and `reloadCmd` stand in for the real programs. */
  function applier(options: { haproxy?: string; reloadCmd?: string; timeoutMs?: number } = {}) {
    const configDir = mkdtempSync(path.join(tmpdir(), "agent-apply-"));
    dirs.push(configDir);
    const created = createApplier({ ...agentOptions, ...options, configDir });
    return { configDir, ...created };
  }
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("reports nothing before the first apply, then the version and the digest recomputed from the disk", async () => {
    const agent = applier();
    expect(await agent.status()).toEqual({
      version: null,
      digest: null,
      appliedAt: null,
      diskDigest: null,
      lastError: null,
    });
    const first = bundle(4, files("one"));
    expect(await agent.apply(first)).toEqual({ outcome: "applied", version: 4 });
    expect(await agent.status()).toEqual({
      version: 4,
      digest: first.digest,
      appliedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      diskDigest: first.digest,
      lastError: null,
    });
  });

  it("shows a file edited by hand, and the next push of the same bundle repairs it", async () => {
    const agent = applier();
    const first = bundle(1, files("one"));
    await agent.apply(first);
    appendFileSync(path.join(agent.configDir, "domain2backend.map"), "b.example bk_default\n");
    const edited = await agent.status();
    expect(edited.digest).toBe(first.digest);
    expect(edited.diskDigest).toBe(
      bundleDigest({ ...files("one"), "domain2backend.map": "a.example bk_default\nb.example bk_default\n" }),
    );
    // A certificate added by hand counts too.
    writeFileSync(path.join(agent.configDir, "certs", "extra.pem"), "x\n");
    expect((await agent.status()).diskDigest).not.toBe(edited.diskDigest);

    expect(await agent.apply(bundle(2, files("one")))).toEqual({ outcome: "applied", version: 2 });
    expect(readFileSync(path.join(agent.configDir, "domain2backend.map"), "utf8")).toBe("a.example bk_default\n");
    expect(existsSync(path.join(agent.configDir, "certs", "extra.pem"))).toBe(false);
    expect(await agent.status()).toMatchObject({ version: 2, digest: first.digest, diskDigest: first.digest });
  });

  it("swaps the crt-list in with the bundle, and a bundle without one (an older version) leaves none behind", async () => {
    const agent = applier();
    const crtList = "# certificate file, then the host names it is offered for\ncerts/site.pem a.example\n";
    const withList = bundle(1, { ...files("new"), "crt-list.txt": crtList });
    expect(parseCheck({ digest: withList.digest, files: withList.files }).files).toEqual(withList.files);
    expect(await agent.apply(withList)).toEqual({ outcome: "applied", version: 1 });
    expect(readFileSync(path.join(agent.configDir, "crt-list.txt"), "utf8")).toBe(crtList);
    expect((await agent.status()).diskDigest).toBe(withList.digest);

    const older = bundle(2, files("old"));
    expect(await agent.apply(older)).toEqual({ outcome: "applied", version: 2 });
    expect(existsSync(path.join(agent.configDir, "crt-list.txt"))).toBe(false);
    expect((await agent.status()).diskDigest).toBe(older.digest);
    // A crt-list put there by hand counts in the disk's digest, and the next push removes it.
    writeFileSync(path.join(agent.configDir, "crt-list.txt"), crtList);
    expect((await agent.status()).diskDigest).toBe(bundleDigest({ ...files("old"), "crt-list.txt": crtList }));
    expect(await agent.apply(bundle(3, files("old")))).toEqual({ outcome: "applied", version: 3 });
    expect(existsSync(path.join(agent.configDir, "crt-list.txt"))).toBe(false);
  });

  it("remembers the last failed apply until one succeeds", async () => {
    const failing = applier({ reloadCmd: "exit 3" });
    await expect(failing.apply(bundle(1, files("one")))).rejects.toThrow(/^reload failed \(exit 3\)/);
    expect((await failing.status()).lastError).toEqual({
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      version: 1,
      message: "reload failed (exit 3): Command failed: /bin/sh -c exit 3; the previous configuration was restored",
    });

    const agent = applier();
    const stateFile = path.join(agent.configDir, ".agent-error.json");
    writeFileSync(stateFile, JSON.stringify({ at: "2030-01-01T00:00:00.000Z", version: 1, message: "old" }));
    await agent.apply(bundle(2, files("two")));
    expect((await agent.status()).lastError).toBeNull();
  });

  it("reports the version a reload put in force when the disk refuses its record, until a success", async () => {
    const agent = applier();
    await agent.apply(bundle(1, files("one")));
    // The record is written beside itself first, then renamed: a directory in that place makes the write fail.
    const blocked = path.join(agent.configDir, ".agent-state.json.tmp", "blocked");
    mkdirSync(blocked, { recursive: true });
    const second = { ...bundle(2, files("two")), pushId: "p-unrecorded" };
    expect(await agent.apply(second)).toEqual({ outcome: "applied", version: 2 });
    const message =
      "version 2 is in force, but the agent could not record it on disk (EISDIR): " +
      "restarted, it would report the version recorded before it";
    expect(await agent.status()).toEqual({
      version: 2,
      digest: second.digest,
      appliedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      diskDigest: second.digest,
      lastError: { at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), version: 2, message },
    });
    expect(agent.pushes.get("p-unrecorded")).toMatchObject({ state: "applied", version: 2 });
    // The record on disk is whole, the one before: what a restarted agent reports.
    const restarted = () => createApplier({ ...agentOptions, configDir: agent.configDir });
    expect(await restarted().status()).toMatchObject({ version: 1, diskDigest: second.digest, lastError: null });

    rmSync(path.dirname(blocked), { recursive: true });
    expect(await agent.apply(bundle(3, files("three")))).toEqual({ outcome: "applied", version: 3 });
    expect((await agent.status()).lastError).toBeNull();
    expect(await restarted().status()).toMatchObject({ version: 3, lastError: null });
  });

  it("checks a bundle in a scratch directory without touching the live files", async () => {
    const agent = applier();
    await agent.apply(bundle(1, files("live")));
    expect(await agent.check(files("other"))).toEqual({ valid: true, version: 1 });
    expect(readFileSync(path.join(agent.configDir, "haproxy.cfg"), "utf8")).toBe(files("live")["haproxy.cfg"]);
    expect(readdirSync(agent.configDir).filter((name) => name.startsWith(".check-"))).toEqual([]);

    const refusing = applier({ haproxy: "false" });
    expect(await refusing.check(files("other"))).toEqual({
      valid: false,
      error: expect.stringMatching(/^haproxy -c failed \(exit 1\): Command failed: false -c -f /),
      alerts: [],
      version: null,
    });
    expect(existsSync(path.join(refusing.configDir, "haproxy.cfg"))).toBe(false);
  });

  it("answers a haproxy -c that does not finish in time as unchecked (504), not as a refusal (422)", async () => {
    const tools = mkdtempSync(path.join(tmpdir(), "agent-apply-tools-"));
    dirs.push(tools);
    const haproxy = path.join(tools, "haproxy");
    writeFileSync(haproxy, "#!/bin/sh\nsleep 30\n");
    chmodSync(haproxy, 0o755);
    const agent = applier({ haproxy, timeoutMs: 500 });
    const pushed = { ...bundle(1, files("slow")), pushId: "p-slow" };
    const message = "version 1 was not applied: haproxy -c did not finish within 500 ms";
    await expect(agent.apply(pushed)).rejects.toMatchObject({ status: 504, message, extra: { checkTimedOut: true } });
    expect(agent.pushes.get("p-slow")).toMatchObject({ state: "refused", error: message });
    expect((await agent.status()).lastError).toMatchObject({ version: 1, message });
    expect(existsSync(path.join(agent.configDir, "haproxy.cfg"))).toBe(false);

    await expect(agent.check(files("slow"))).rejects.toMatchObject({
      status: 504,
      message: "haproxy -c did not finish within 500 ms",
      extra: { checkTimedOut: true },
    });
  });

  it("takes a check's files and digest without a version", () => {
    expect(parseCheck({ digest: bundleDigest(files("x")), files: files("x") })).toEqual({
      digest: bundleDigest(files("x")),
      files: files("x"),
    });
    expect(() => parseCheck({ digest: "sha256:0", files: files("x") })).toThrow(
      "the files do not match the digest (truncated upload?)",
    );
    expect(() => parseCheck([])).toThrow("the body must be a JSON object");
  });
});
