#!/usr/bin/env node
// `npm start`: prepares local state and runs every service locally until Ctrl-C or SIGTERM.
// 1. creates .dev.vars from .dev.vars.example when missing (local-only values);
// 2. bundles config/ for the rate limit service and applies the D1 migrations to the local state
//    (the same --persist-to as wrangler dev, when given);
// 3. runs `wrangler dev` on PORT (default 8787), passing on the arguments given after `--`;
// 4. runs the gRPC gateway (grpc-gateway/, GRPC_PORT default 8081) in front of it: RATELIMIT_UPSTREAM_URL
//    defaults to the origin of that `wrangler dev`; with CONFIG_TYPE=GRPC_XDS_SOTW (in .dev.vars or the
//    environment) the gateway is also the xDS client.
// On a signal every child's process group is stopped, so no workerd is left behind.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";

const root = path.join(import.meta.dirname, "..");
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
const port = process.env.PORT || "8787";
const devArgs = process.argv.slice(2);
const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");

function optionValue(args, name) {
  const index = args.findIndex((arg) => arg === name || arg.startsWith(`${name}=`));
  if (index < 0) return undefined;
  return args[index].includes("=") ? args[index].split("=").slice(1).join("=") : args[index + 1];
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, env, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`npm start: ${path.basename(command)} ${args.join(" ")} failed`);
    process.exit(result.status ?? 1);
  }
}

if (!existsSync(path.join(root, ".dev.vars"))) {
  copyFileSync(path.join(root, ".dev.vars.example"), path.join(root, ".dev.vars"));
  console.log("npm start: created .dev.vars from .dev.vars.example (local-only values)");
}

run(process.execPath, [path.join(root, "scripts", "bundle-ratelimit-config.mjs")]);
const persistTo = optionValue(devArgs, "--persist-to");
run(process.execPath, [
  wrangler,
  "d1",
  "migrations",
  "apply",
  "DB",
  "--local",
  ...(persistTo ? ["--persist-to", persistTo] : []),
]);

const children = [];
function start(name, command, args, extraEnv = {}) {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...env, CI: env.CI ?? "", ...extraEnv },
    stdio: "inherit",
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

const hasPort = devArgs.some((arg) => arg === "--port" || arg.startsWith("--port="));
start("wrangler dev", process.execPath, [
  wrangler,
  "dev",
  "--test-scheduled",
  ...(hasPort ? [] : ["--port", port]),
  ...devArgs,
]);

// wrangler dev binds "localhost" unless --ip says otherwise; Node tries both of its addresses.
const givenHost = optionValue(devArgs, "--ip") ?? "localhost";
const devHost = ["0.0.0.0", "::"].includes(givenHost)
  ? "localhost"
  : givenHost.includes(":")
    ? `[${givenHost}]`
    : givenHost;
const devOrigin = `http://${devHost}:${optionValue(devArgs, "--port") ?? port}`;
// The gateway reads .dev.vars too (the environment wins), so CONFIG_TYPE=GRPC_XDS_SOTW set there makes both the
// Worker and the gateway's xDS client use the management server, with the same RATELIMIT_ADMIN_TOKEN.
const gatewayVars = Object.entries(parseEnv(readFileSync(path.join(root, ".dev.vars"), "utf8"))).filter(
  ([name]) => /^(CONFIG_|XDS_|GRPC_|FORCE_START_|RATELIMIT_ADMIN_TOKEN$)/.test(name) && process.env[name] === undefined,
);
start("grpc gateway", process.execPath, [path.join(root, "grpc-gateway", "gateway.mjs")], {
  ...Object.fromEntries(gatewayVars),
  RATELIMIT_UPSTREAM_URL: env.RATELIMIT_UPSTREAM_URL || devOrigin,
});
