#!/usr/bin/env node
// `npm start`: prepares local state and runs every service locally until Ctrl-C or SIGTERM.
// 1. creates .dev.vars from .dev.vars.example when missing (local-only values);
// 2. bundles config/ for the rate limit service and applies the D1 migrations to the local state
//    (the same --persist-to as wrangler dev, when given), printing their output only when they fail;
// 3. runs `wrangler dev` on PORT (default 8787) at --log-level warn, passing on the arguments given after `--`
//    (`npm start -- --log-level log` brings back wrangler's banner, request lines and the Worker's info logs);
// 4. runs the gRPC gateway (grpc-gateway/, GRPC_PORT default 8081) in front of it: RATELIMIT_UPSTREAM_URL
//    defaults to the origin of that `wrangler dev`; with CONFIG_TYPE=GRPC_XDS_SOTW (in .dev.vars or the
//    environment) the gateway is also the xDS client;
// 5. once the Worker answers and the gateway listens (or waits for its first xDS snapshot), prints one summary:
//    the URLs, the gRPC address, the docs, the credentials of .dev.vars (masked), where the local state lives.
// On a signal every child's process group is stopped, so no workerd is left behind.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseEnv } from "node:util";

const root = path.join(import.meta.dirname, "..");
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
const port = process.env.PORT || "8787";
const devArgs = process.argv.slice(2);
const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const devVarsPath = path.join(root, ".dev.vars");

function optionValue(args, name) {
  const index = args.findIndex((arg) => arg === name || arg.startsWith(`${name}=`));
  if (index < 0) return undefined;
  return args[index].includes("=") ? args[index].split("=").slice(1).join("=") : args[index + 1];
}

const hasOption = (args, name) => args.some((arg) => arg === name || arg.startsWith(`${name}=`));

/** Runs a preparation step with its output kept back; on failure prints that output and exits. */
function runQuietly(command, args) {
  // CI=true and no stdin: wrangler must not wait on a confirmation nobody sees.
  const result = spawnSync(command, args, {
    cwd: root,
    env: { ...env, CI: "true" },
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    process.stdout.write(result.stdout ?? "");
    process.stderr.write(result.stderr ?? "");
    console.error(`npm start: ${path.basename(args[0], path.extname(args[0]))} ${args.slice(1).join(" ")} failed`);
    process.exit(result.status ?? 1);
  }
}

const createdDevVars = !existsSync(devVarsPath);
if (createdDevVars) copyFileSync(path.join(root, ".dev.vars.example"), devVarsPath);
const devVars = parseEnv(readFileSync(devVarsPath, "utf8"));

runQuietly(process.execPath, [path.join(root, "scripts", "bundle-ratelimit-config.mjs")]);
const persistTo = optionValue(devArgs, "--persist-to");
runQuietly(process.execPath, [
  wrangler,
  "d1",
  "migrations",
  "apply",
  "DB",
  "--local",
  ...(persistTo ? ["--persist-to", persistTo] : []),
]);

const children = [];
function start(name, command, args, { extraEnv = {}, stdout = "inherit" } = {}) {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...env, CI: env.CI ?? "", ...extraEnv },
    stdio: ["inherit", stdout, "inherit"],
    detached: true,
  });
  child.on("exit", (code, signal) => {
    if (!stopping) {
      console.error(`npm start: ${name} exited (${signal ?? code}); stopping the others`);
      stop(code ?? 1);
    }
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(exitCode = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
  }
  const deadline = setTimeout(() => {
    for (const child of children) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }
    process.exit(exitCode);
  }, 5000);
  Promise.all(
    children.map((child) =>
      child.exitCode !== null || child.signalCode !== null ? null : new Promise((r) => child.once("exit", r)),
    ),
  ).then(() => {
    clearTimeout(deadline);
    process.exit(exitCode);
  });
}

process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

start("wrangler dev", process.execPath, [
  wrangler,
  "dev",
  "--test-scheduled",
  ...(hasOption(devArgs, "--port") ? [] : ["--port", port]),
  ...(hasOption(devArgs, "--log-level") ? [] : ["--log-level", "warn"]),
  ...devArgs,
]);

// wrangler dev binds "localhost" unless --ip says otherwise; Node tries both of its addresses.
const givenHost = optionValue(devArgs, "--ip") ?? "localhost";
const displayHost = (host) =>
  ["0.0.0.0", "::"].includes(host) ? "localhost" : host.includes(":") ? `[${host}]` : host;
const devOrigin = `http://${displayHost(givenHost)}:${optionValue(devArgs, "--port") ?? port}`;
// The gateway reads .dev.vars too (the environment wins), so CONFIG_TYPE=GRPC_XDS_SOTW set there makes both the
// Worker and the gateway's xDS client use the management server, with the same RATELIMIT_ADMIN_TOKEN.
const gatewayVars = Object.entries(devVars).filter(
  ([name]) => /^(CONFIG_|XDS_|GRPC_|FORCE_START_|RATELIMIT_ADMIN_TOKEN$)/.test(name) && process.env[name] === undefined,
);
const gateway = start("grpc gateway", process.execPath, [path.join(root, "grpc-gateway", "gateway.mjs")], {
  extraEnv: { ...Object.fromEntries(gatewayVars), RATELIMIT_UPSTREAM_URL: env.RATELIMIT_UPSTREAM_URL || devOrigin },
  stdout: "pipe",
});

// The gateway's first "serving" (or "waiting for the first xDS snapshot") line goes into the summary instead; every
// other line passes through.
/** @type {Promise<{ address?: string, waitingFor?: string }>} */
const gatewayListening = new Promise((resolve) => {
  let told = false;
  createInterface({ input: gateway.stdout }).on("line", (line) => {
    let message;
    let entry = {};
    try {
      entry = JSON.parse(line);
      message = entry["@message"];
    } catch {}
    if (!told && message === "grpc-gateway: serving") {
      told = true;
      return resolve({ address: entry.address });
    }
    if (!told && message?.startsWith("grpc-gateway: waiting for the first xDS snapshot")) {
      told = true;
      return resolve({ waitingFor: entry.server });
    }
    console.log(line);
  });
});

async function workerAnswers() {
  // A build error keeps wrangler dev running (it waits for a fix), so say once what the summary waits for.
  const slow = setTimeout(
    () => console.error(`npm start: still waiting for the Worker to answer at ${devOrigin}/`),
    60_000,
  );
  while (!stopping) {
    try {
      const response = await fetch(`${devOrigin}/`);
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  clearTimeout(slow);
}

/** Enough of a secret to tell which one is set, not enough to use it. */
const masked = (value) => (value ? `${value.slice(0, 2)}***` : "(not set)");

function grpcAddress({ address, waitingFor }) {
  const gatewayEnv = { ...Object.fromEntries(gatewayVars), ...process.env };
  if (address) {
    if (address.startsWith("unix:")) return address;
    const at = address.lastIndexOf(":");
    return `${displayHost(address.slice(0, at))}:${address.slice(at + 1)}`;
  }
  const planned = gatewayEnv.GRPC_UDS
    ? `unix:${gatewayEnv.GRPC_UDS}`
    : `${displayHost(gatewayEnv.GRPC_HOST || "0.0.0.0")}:${gatewayEnv.GRPC_PORT || "8081"}`;
  return `${planned} (opens once the first xDS snapshot from ${waitingFor} is accepted)`;
}

function summary(gatewayState) {
  const statePath = persistTo ? path.resolve(root, persistTo) : path.join(root, ".wrangler", "state");
  const devVarsOrigin = createdDevVars ? "created now from .dev.vars.example" : "read from .dev.vars";
  const rows = [
    ["Proxy API", `${devOrigin}/projects  (admin: /admin/...; HTTP Basic)`],
    ["News API", `${devOrigin}/news  (POST /auth with MASTER_KEY for a JWT)`],
    ["Rate limit", `${devOrigin}/json  (HTTP)`],
    ["", `${grpcAddress(gatewayState)}  (gRPC, envoy.service.ratelimit.v3.RateLimitService)`],
    ["", `${devOrigin}/stats, /metrics, /rlconfig  (Bearer RATELIMIT_ADMIN_TOKEN)`],
    ["API docs", `${devOrigin}/docs  ·  ${devOrigin}/openapi.json`],
    [
      "Credentials",
      `${devVarsOrigin}: PROXY_ADMIN_USERNAME=${devVars.PROXY_ADMIN_USERNAME ?? "(not set)"}` +
        ` PROXY_ADMIN_PASSWORD=${masked(devVars.PROXY_ADMIN_PASSWORD)}`,
    ],
    [
      "",
      `MASTER_KEY=${masked(devVars.MASTER_KEY)} RATELIMIT_ADMIN_TOKEN=${masked(devVars.RATELIMIT_ADMIN_TOKEN)}` +
        ` HAPROXY_AGENT_TOKEN=${masked(devVars.HAPROXY_AGENT_TOKEN)}`,
    ],
    ["Local state", `${statePath}  (D1, Durable Objects, queues; delete it to start afresh)`],
    ["Logs", "warnings and errors only; npm start -- --log-level log shows every request and info line"],
    ["Stop", "Ctrl-C"],
  ];
  const lines = rows.map(([label, value]) => `  ${label.padEnd(12)} ${value}`);
  return `\nnpm start: ready\n${lines.join("\n")}\n`;
}

const [, gatewayState] = await Promise.all([workerAnswers(), gatewayListening]);
if (!stopping) console.log(summary(gatewayState));
