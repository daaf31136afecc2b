// `npm start` refusing to start (scripts/start.mjs): a port taken or a setting bad or missing is named, with the
// setting that changes it, exit code 1, before anything is spawned or listens; --help prints the usage. Every run
// reads its vars from a temporary --env-file (never the repository's .dev.vars) and uses free ports and a temporary
// --persist-to, whose path in any process's command line would betray a child left behind.
import { spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { usage } from "../../scripts/start/args.mjs";

// Each test runs npm start, which bundles the settings check with esbuild before it answers: 2 to 4 s on a loaded
// 2-core machine, too close to vitest's 5 s.
vi.setConfig({ testTimeout: 30_000 });

const root = path.join(import.meta.dirname, "..", "..");
const dir = mkdtempSync(path.join(tmpdir(), "npm-start-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const example = readFileSync(path.join(root, ".dev.vars.example"), "utf8");
const HEADER = "npm start: nothing started; fix these first (npm start -- --help lists the options):";
/** npm start's answer when it refuses to start: exit 1, nothing on stdout, the header and these lines on stderr. */
const refusal = (...lines: string[]) => ({ code: 1, stdout: "", stderr: [HEADER, ...lines, ""].join("\n") });

/** A vars file: .dev.vars.example without the lines of `dropped`, plus `extra` lines. */
function varsFile(name: string, dropped: string[] = [], extra: string[] = []): string {
  const file = path.join(dir, name);
  const kept = example.split("\n").filter((line) => !dropped.some((variable) => line.startsWith(`${variable}=`)));
  writeFileSync(file, [...kept, ...extra].join("\n"));
  return file;
}

/**
 * Runs `node scripts/start.mjs ...args` (or another command) with only these variables, PATH and HOME, in the
 * repository or in `cwd`.
 */
function run(
  args: string[],
  env: Record<string, string> = {},
  command = [process.execPath, "scripts/start.mjs"],
  cwd = root,
) {
  const child = spawn(command[0], [...command.slice(1), ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (code) => resolve({ code, stdout, stderr })),
  );
}

function listen(port: number, host: string): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host, exclusive: true }, () => resolve(server));
  });
}

const close = (server: Server) => new Promise((resolve) => server.close(resolve));

/** A port free right now (the kernel's pick, released at once). */
async function freePort(): Promise<number> {
  const server = await listen(0, "127.0.0.1");
  const { port } = server.address() as { port: number };
  await close(server);
  return port;
}

/** Whether (host, port) can be bound: nothing of npm start's was left listening there. */
const bindable = (port: number, host: string) =>
  listen(port, host).then(
    (server) => close(server).then(() => true),
    () => false,
  );

/** The processes whose command line holds `text` (a child left behind would hold its --persist-to). */
function processesWith(text: string): string[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const line = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
        return line.includes(text) ? [line] : [];
      } catch {
        return [];
      }
    });
}

/** Free ports for wrangler dev and the gateway, and a --persist-to of this test's own. */
type Started = Awaited<ReturnType<typeof plan>>;

async function plan(name: string) {
  const [port, grpcPort] = [await freePort(), await freePort()];
  const persistTo = path.join(dir, `state-${name}`);
  return { port, grpcPort, persistTo, args: ["--port", String(port), "--persist-to", persistTo] };
}

/** npm start on the planned ports and state with this vars file and any further arguments, its gateway on its port. */
const runPlanned = (started: Started, vars: string, ...more: string[]) =>
  run([...started.args, "--env-file", vars, ...more], { GRPC_PORT: String(started.grpcPort) });

/** Nothing was started: no state written, no process holding the state's path, both ports free. */
async function expectNothingStarted({ port, grpcPort, persistTo }: Awaited<ReturnType<typeof plan>>) {
  expect(existsSync(persistTo)).toBe(false);
  expect(processesWith(persistTo)).toEqual([]);
  expect(await bindable(port, "127.0.0.1")).toBe(true);
  expect(await bindable(grpcPort, "0.0.0.0")).toBe(true);
}

describe("npm start --help", () => {
  it("prints the usage with the port options and exits 0 without starting anything; -h is the same", async () => {
    const { args, ...started } = await plan("help");
    const help = await run(["--help", ...args]);
    expect(help).toEqual({ code: 0, stdout: `${usage}\n`, stderr: "" });
    expect(await run(["-h", ...args])).toEqual(help);
    for (const line of [
      "  --port PORT            port of wrangler dev (default: PORT, else 8787)",
      "  --var NAME:VALUE       a Worker variable, over wrangler.toml [vars] and .dev.vars (repeatable)",
      "  --env-file FILE        the Worker's local variables from FILE instead of .dev.vars (wrangler's option; repeatable)",
      "  GRPC_PORT              port of the gRPC gateway (default 8081; 0 takes a free one)",
      "  GRPC_UDS               a unix socket path for the gRPC gateway instead of GRPC_HOST and GRPC_PORT",
    ]) {
      expect(help.stdout.split("\n")).toContain(line);
    }
    await expectNothingStarted({ args, ...started });
  });

  it("is what `npm start -- --help` prints", async () => {
    const help = await run(["--help"], {}, ["npm", "start", "--silent", "--"]);
    expect(help).toEqual({ code: 0, stdout: `${usage}\n`, stderr: "" });
  });
});

describe("npm start with a port taken", () => {
  it.each<
    [string, { label: string; held: (started: Started) => number; host: string; message: (started: Started) => string }]
  >([
    [
      "wrangler dev's port, --port and PORT",
      {
        label: "dev-port",
        held: (started) => started.port,
        host: "127.0.0.1",
        message: (started) =>
          `  port ${started.port} (localhost) is already in use: wrangler dev listens there (set by --port). Choose ` +
          `another with --port or PORT, e.g. npm start -- --port ${started.port + 1}`,
      },
    ],
    [
      "the gateway's port and GRPC_PORT",
      {
        label: "grpc-port",
        held: (started) => started.grpcPort,
        host: "0.0.0.0",
        message: (started) =>
          `  port ${started.grpcPort} (0.0.0.0) is already in use: the gRPC gateway listens there (set by GRPC_PORT). ` +
          `Choose another with GRPC_PORT, e.g. GRPC_PORT=${started.grpcPort + 1} npm start (GRPC_HOST chooses the ` +
          "address, GRPC_UDS a unix socket instead)",
      },
    ],
  ])("names %s, and exits 1 before anything starts", async (_what, { label, held, host, message }) => {
    const started = await plan(label);
    const holder = await listen(held(started), host);
    const vars = varsFile(`${label}.vars`);
    const result = await runPlanned(started, vars);
    await close(holder);
    expect(result).toEqual(refusal(message(started)));
    await expectNothingStarted(started);
  });

  it("says when the port came from PORT", async () => {
    const started = await plan("dev-port-env");
    const holder = await listen(started.port, "127.0.0.1");
    const vars = varsFile("dev-port-env.vars");
    const env = { PORT: String(started.port), GRPC_PORT: String(started.grpcPort) };
    const result = await run(["--persist-to", started.persistTo, "--env-file", vars], env);
    await close(holder);
    expect(result.code).toBe(1);
    expect(result.stderr.split("\n")[1]).toBe(
      `  port ${started.port} (localhost) is already in use: wrangler dev listens there (set by PORT). Choose ` +
        `another with --port or PORT, e.g. npm start -- --port ${started.port + 1}`,
    );
    await expectNothingStarted(started);
  });
});

describe("npm start with a bad or missing setting", () => {
  it("names STATS_FLUSH_INTERVAL given by --var and what it takes, and exits 1 before anything listens", async () => {
    const started = await plan("bad-var");
    const vars = varsFile("bad-var.vars");
    const result = await runPlanned(started, vars, "--var", "STATS_FLUSH_INTERVAL:banana");
    expect(result).toEqual(
      refusal(`  STATS_FLUSH_INTERVAL (set by --var): expected a duration such as "10s", "500ms" or "1m"`),
    );
    await expectNothingStarted(started);
  });

  it("names each bad value with the file it came from, and a --var that wins over the file", async () => {
    const started = await plan("bad-file");
    const vars = varsFile("bad-file.vars", [], ["NEWS_FEEDS=ftp://feeds.example", "COUNTER_OBJECT_SHARDS=0"]);
    const result = await runPlanned(started, vars, "--var", "COUNTER_OBJECT_SHARDS:8", "JWT_EXPIRES_IN:soon");
    expect(result).toEqual(
      refusal(
        "  JWT_EXPIRES_IN (set by --var): expected a duration such as 7d, 12h or 30m",
        `  NEWS_FEEDS (set in ${vars}): expected http(s) URLs separated by commas`,
      ),
    );
    await expectNothingStarted(started);
  });

  it("names what the Worker would refuse on its first request, and a reference alias by its own name", async () => {
    const started = await plan("whole");
    const vars = varsFile("whole.vars", [], ["REDIS_URL=localhost", "LOG_LEVEL=verbose"]);
    const result = await runPlanned(started, vars, "--var", "BACKEND_TYPE:redis");
    expect(result).toEqual(
      refusal(
        `  REDIS_URL (set in ${vars}): expected host:port with a port from 1 to 65535`,
        `  LOG_LEVEL (set in ${vars}): expected panic, fatal, error, warn, info, debug or trace`,
      ),
    );
    await expectNothingStarted(started);
  });

  it("names RATELIMIT_ADMIN_TOKEN and PROXY_ADMIN_PASSWORD when the vars file lacks them", async () => {
    const started = await plan("missing");
    const vars = varsFile("missing.vars", ["RATELIMIT_ADMIN_TOKEN", "PROXY_ADMIN_PASSWORD"]);
    const result = await runPlanned(started, vars);
    const required = "required locally, and must not be empty (.dev.vars.example has a local value)";
    expect(result).toEqual(
      refusal(`  PROXY_ADMIN_PASSWORD (not set): ${required}`, `  RATELIMIT_ADMIN_TOKEN (not set): ${required}`),
    );
    await expectNothingStarted(started);
  });

  it("names a credential made empty by --var", async () => {
    const started = await plan("empty");
    const vars = varsFile("empty.vars");
    const result = await runPlanned(started, vars, "--var", "MASTER_KEY:");
    expect(result).toEqual(
      refusal(
        `  MASTER_KEY (set by --var): required locally, and must not be empty (.dev.vars.example has a local value)`,
      ),
    );
    await expectNothingStarted(started);
  });

  it("names the gateway's settings from the environment and the vars file, and a port out of range", async () => {
    const started = await plan("gateway");
    const vars = varsFile("gateway.vars", [], ["GRPC_SERVER_USE_TLS=yes"]);
    const args = ["--port", "70000", "--persist-to", started.persistTo, "--env-file", vars];
    const result = await run(args, { GRPC_PORT: "-1" });
    expect(result).toEqual(
      refusal(
        "  --port: expected a port from 1 to 65535",
        "  GRPC_PORT (set in the environment; gRPC gateway): Too small: expected number to be >=0",
        `  GRPC_SERVER_USE_TLS (set in ${vars}; gRPC gateway): Invalid option: expected one of "true"|"1"|"t"|"false"|"0"|"f"`,
      ),
    );
    await expectNothingStarted(started);
  });
});

describe("npm start in a fresh clone", () => {
  it("bundles config/ before the settings check that reads it, and names a bad setting", async () => {
    // A clone has no src/ratelimit/config/bundled.gen.ts (git ignores it) until something bundles config/.
    const clone = path.join(dir, "clone");
    const generated = new Set(["node_modules", ".git", ".wrangler", ".dev.vars", "bundled.gen.ts"]);
    cpSync(root, clone, { recursive: true, filter: (source) => !generated.has(path.basename(source)) });
    symlinkSync(path.join(root, "node_modules"), path.join(clone, "node_modules"));
    const bundle = path.join(clone, "src", "ratelimit", "config", "bundled.gen.ts");
    expect(existsSync(bundle)).toBe(false);
    const started = await plan("clone");
    const vars = varsFile("clone.vars");
    const args = [...started.args, "--env-file", vars, "--var", "STATS_FLUSH_INTERVAL:banana"];
    const result = await run(args, { GRPC_PORT: String(started.grpcPort) }, undefined, clone);
    expect(result).toEqual(
      refusal(`  STATS_FLUSH_INTERVAL (set by --var): expected a duration such as "10s", "500ms" or "1m"`),
    );
    expect(existsSync(bundle)).toBe(true);
    await expectNothingStarted(started);
  });
});
