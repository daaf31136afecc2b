// The real `npm start` (wrangler dev, its workerd, the gRPC gateway, the watchdog), stopped in every way an operator
// stops it: SIGTERM or SIGINT to npm, SIGHUP to the whole group (a closed terminal), SIGKILL to npm or to the
// supervisor itself, a workerd that crashes, a start refused for a taken port. After each, no process of its group
// is left and its ports are free.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { commandLine, processTable } from "../../scripts/start/processes.mjs";
import { canConnect, freePort, root, tempDir } from "../support/processes.mjs";
import { applyMigrations } from "../support/wrangler-dev.mjs";

interface Started {
  npm: ChildProcess;
  ports: number[];
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: Started[] = [];
const blockers: Server[] = [];

afterEach(async () => {
  for (const { npm } of started.splice(0)) {
    try {
      process.kill(-npm.pid!, "SIGKILL");
    } catch {}
  }
  await Promise.all(blockers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** The live processes of a process group. */
const groupOf = (pgid: number) => processTable().filter((entry) => entry.pgid === pgid && !entry.zombie);

/**
 * Runs `npm start` on fresh ports and state in its own process group; resolves once it printed "ready". The state is
 * empty only with `emptyState`: otherwise it is a copy of the suites' migrated template, so that npm start's own
 * `wrangler d1 migrations apply` finds nothing to do (16 s of each start here, once per migration, when it starts
 * from nothing; the first test keeps that path).
 */
async function npmStart(options: { waitReady?: boolean; grpcPort?: number; emptyState?: boolean } = {}) {
  const [port, inspector] = [await freePort(), await freePort()];
  const grpcPort = options.grpcPort ?? (await freePort());
  const state = tempDir("npm-start-state-");
  if (!options.emptyState)
    applyMigrations({ projectDir: root, configPath: undefined, state: state.dir, name: "npm start" });
  const args = ["start", "--", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspector)];
  const npm = spawn("npm", [...args, "--persist-to", state.dir, "--env-file", path.join(root, ".dev.vars.example")], {
    cwd: root,
    env: { ...process.env, GRPC_HOST: "127.0.0.1", GRPC_PORT: String(grpcPort) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  npm.stdout!.on("data", (chunk) => (output += chunk));
  npm.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    npm.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const run: Started = { npm, ports: [port, grpcPort, inspector], output: () => output, exited };
  started.push(run);
  if (options.waitReady === false) return run;
  const deadline = Date.now() + 90_000;
  while (!output.includes("npm start: ready")) {
    if (npm.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not get ready:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return run;
}

/** The group's processes whose command line or name matches. */
const members = (run: Started, match: (line: string, name: string) => boolean) =>
  groupOf(run.npm.pid!).filter((entry) => match(commandLine(entry.pid), entry.name));

/** Waits until no process of the group is left (15 s at most), then checks that every port is free. */
async function expectAllGone(run: Started) {
  const deadline = Date.now() + 15_000;
  while (groupOf(run.npm.pid!).length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(groupOf(run.npm.pid!).map((entry) => `${entry.pid} ${entry.name} ${commandLine(entry.pid)}`)).toEqual([]);
  for (const port of run.ports) expect(await canConnect(port)).toBe(false);
}

describe("npm start stops everything it started", () => {
  it("runs wrangler, two workerd, the gateway and the watchdog in npm's process group", async () => {
    const run = await npmStart({ emptyState: true });
    const names = members(run, () => true).map((entry) => entry.name);
    expect(names.filter((name) => name === "workerd")).toHaveLength(2);
    expect(members(run, (line) => line.includes("grpc-gateway/gateway.mjs"))).toHaveLength(1);
    expect(members(run, (line) => line.includes("scripts/start/watchdog.mjs"))).toHaveLength(1);
    process.kill(run.npm.pid!, "SIGTERM");
    await run.exited;
    await expectAllGone(run);
  });

  it("stops on SIGINT to npm", async () => {
    const run = await npmStart();
    process.kill(run.npm.pid!, "SIGINT");
    await run.exited;
    await expectAllGone(run);
  });

  it("stops on SIGHUP to the whole group, as when its terminal closes", async () => {
    const run = await npmStart();
    process.kill(-run.npm.pid!, "SIGHUP");
    await expectAllGone(run);
  });

  it("stops when npm, its parent, is killed with SIGKILL", async () => {
    const run = await npmStart();
    process.kill(run.npm.pid!, "SIGKILL");
    await expectAllGone(run);
  });

  it("leaves nothing when the supervisor itself is killed with SIGKILL: the watchdog stops the rest", async () => {
    const run = await npmStart();
    const [supervisor] = members(run, (line) => line.includes("scripts/start.mjs"));
    process.kill(supervisor.pid, "SIGKILL");
    await expectAllGone(run);
    expect(run.output()).toMatch(/npm start's watchdog: the supervisor is gone; stopping the \d+ processes it left/);
  });

  it("notices a crashed workerd, says so and exits non-zero", async () => {
    const run = await npmStart();
    const runtimes = members(run, (_line, name) => name === "workerd");
    const user = runtimes.find((entry) => !commandLine(entry.pid).includes(`:${run.ports[0]}`))!;
    process.kill(user.pid, "SIGKILL");
    const { code } = await run.exited;
    expect(code).toBe(1);
    expect(run.output()).toContain(
      `npm start: workerd (the Worker runtime of wrangler dev, pid ${user.pid}) exited and was not restarted; stopping the others`,
    );
    await expectAllGone(run);
  });

  it("notices a child that dies during the start, and leaves no orphan", async () => {
    const run = await npmStart({ waitReady: false });
    let gateway: { pid: number } | undefined;
    for (let i = 0; i < 600 && !gateway; i++) {
      [gateway] = members(run, (line) => line.includes("grpc-gateway/gateway.mjs"));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    process.kill(gateway!.pid, "SIGKILL");
    const { code } = await run.exited;
    expect(code).toBe(1);
    expect(run.output()).toContain("npm start: grpc gateway exited (SIGKILL); stopping the others");
    await expectAllGone(run);
  });

  it("refuses a taken port before starting anything", async () => {
    const grpcPort = await freePort();
    const blocker = createServer();
    blockers.push(blocker);
    await new Promise<void>((resolve) => blocker.listen(grpcPort, "127.0.0.1", resolve));
    const run = await npmStart({ waitReady: false, grpcPort });
    const { code } = await run.exited;
    expect(code).toBe(1);
    expect(run.output()).toContain("npm start: nothing started; fix these first");
    expect(groupOf(run.npm.pid!)).toEqual([]);
    const [port, , inspector] = run.ports;
    for (const free of [port, inspector]) expect(await canConnect(free)).toBe(false);
  });
});
