#!/usr/bin/env node
// `npm start`: prepares local state and runs every service locally until Ctrl-C or SIGTERM (`--help`: the usage).
// 1. creates .dev.vars from .dev.vars.example when missing (local-only values), and bundles config/ for the rate
//    limit service (a fresh clone has no bundle, and the settings check reads it);
// 2. before it starts anything, checks that wrangler dev's port (PORT or --port, default 8787), the gateway's
//    (GRPC_PORT, default 8081, or GRPC_UDS) and an --inspector-port given are free, and every setting of the env the
//    Worker and the gateway will see (scripts/start/settings.mjs); it stops naming each problem, with exit code 1;
// 3. applies the D1 migrations to the local state (the same --persist-to as wrangler dev, when given); it and the
//    bundling print their output only when they fail;
// 4. runs `wrangler dev` at --log-level warn, passing on the arguments given after `--`
//    (`npm start -- --log-level log` brings back wrangler's banner, request lines and the Worker's info logs), with
//    --var NEWS_DEMO:true when no news publisher is set (scripts/start/news-demo.mjs), and the local-only variables
//    .dev.vars does not set (scripts/start/local-vars.mjs: wrangler.toml's [vars] are the deploy configuration);
// 5. runs the gRPC gateway (grpc-gateway/) in front of it: RATELIMIT_UPSTREAM_URL defaults to the origin of that
//    `wrangler dev`; with CONFIG_TYPE=GRPC_XDS_SOTW (in .dev.vars or the environment) the gateway is also the xDS
//    client;
// 6. once the Worker answers and the gateway listens (or waits for its first xDS snapshot), runs the news ingestion
//    once in demo mode and prints one summary (scripts/start/summary.mjs).
// The children stay in npm start's process group; every process below it is stopped when it stops (SIGINT, SIGTERM,
// SIGHUP), when a child or wrangler's workerd dies (said, exit code 1), when its parent dies, and by a watchdog when
// it is killed itself (scripts/start/supervise.mjs), so no workerd is left behind.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { hasOption, optionValue, optionValues, usage, wantsHelp } from "./start/args.mjs";
import { missingLocalVars } from "./start/local-vars.mjs";
import { runNewsIngestion, wantsNewsDemo } from "./start/news-demo.mjs";
import { parsePort, portProblems } from "./start/ports.mjs";
import { gatewayEnv, loadSettingsCheck, settingProblems, workerEnv } from "./start/settings.mjs";
import { displayHost, summary } from "./start/summary.mjs";
import { createSupervisor } from "./start/supervise.mjs";

const root = path.join(import.meta.dirname, "..");
const devArgs = process.argv.slice(2);
if (wantsHelp(devArgs)) {
  console.log(usage);
  process.exit(0);
}

/** @type {NodeJS.ProcessEnv} */
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const portText = optionValue(devArgs, "--port") ?? (process.env.PORT || "8787");
const portOrigin = hasOption(devArgs, "--port") ? "set by --port" : process.env.PORT ? "set by PORT" : "the default";
const port = parsePort(portText);
// wrangler dev binds "localhost" unless --ip says otherwise; its inspector 127.0.0.1 unless --inspector-ip does.
const givenHost = optionValue(devArgs, "--ip") ?? "localhost";
const devOrigin = `http://${displayHost(givenHost)}:${portText}`;
const inspectorText = optionValue(devArgs, "--inspector-port");
const persistTo = optionValue(devArgs, "--persist-to");

// wrangler reads .dev.vars only without --env-file, so only then is a missing one created.
const envFiles = optionValues(devArgs, "--env-file", { array: true });
const devVarsPath = path.join(root, ".dev.vars");
const createdDevVars = envFiles.length === 0 && !existsSync(devVarsPath);
if (createdDevVars) copyFileSync(path.join(root, ".dev.vars.example"), devVarsPath);
const varsOrigin =
  envFiles.length > 0
    ? `read from ${envFiles.join(", ")}`
    : createdDevVars
      ? "created now from .dev.vars.example"
      : "read from .dev.vars";

// Before the settings check, which imports the bundle: a fresh clone has none until this writes it.
runQuietly(process.execPath, [path.join(root, "scripts", "bundle-ratelimit-config.mjs")]);
const [worker, checkSettings] = await Promise.all([workerEnv(root, devArgs), loadSettingsCheck(root)]).catch(
  (error) => {
    console.error(`npm start: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  },
);
const newsDemo = wantsNewsDemo(worker.values);
if (newsDemo) {
  worker.values.NEWS_DEMO = "true";
  worker.origins.NEWS_DEMO = "set by npm start: no news publisher is set";
}
const localVars = missingLocalVars(worker);
for (const [name, value] of Object.entries(localVars)) {
  worker.values[name] = value;
  worker.origins[name] = "set by npm start: the local value (wrangler.toml has the deploy one)";
}
const gateway = gatewayEnv(worker, process.env, { upstreamUrl: devOrigin, port: portText });

/** Every reason not to start: the addresses to listen on, then the settings. */
async function problems() {
  /** @type {string[]} */
  const found = [];
  if (port === undefined) found.push(`${portOrigin.replace("set by ", "")}: expected a port from 1 to 65535`);
  const inspectorPort = inspectorText === undefined ? undefined : parsePort(inspectorText);
  if (inspectorText !== undefined && inspectorPort === undefined) {
    found.push("--inspector-port: expected a port from 1 to 65535");
  }
  const plan = { host: givenHost, port, portOrigin, inspectorPort, gateway: gateway.values };
  found.push(
    ...(await portProblems({ ...plan, inspectorHost: optionValue(devArgs, "--inspector-ip") ?? "127.0.0.1" })),
  );
  return found;
}

/**
 * Stops before anything starts when there is any problem, naming each.
 * @param {string[]} found
 */
function refuseIf(found) {
  if (found.length === 0) return;
  console.error(`npm start: nothing started; fix these first (npm start -- --help lists the options):`);
  for (const problem of found) console.error(`  ${problem}`);
  process.exit(1);
}

refuseIf([...(await problems()), ...settingProblems(checkSettings, worker, gateway)]);

/**
 * Runs a preparation step with its output kept back; on failure prints that output and exits.
 * @param {string} command @param {string[]} args
 */
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

runQuietly(process.execPath, [
  wrangler,
  "d1",
  "migrations",
  "apply",
  "DB",
  "--local",
  ...(persistTo ? ["--persist-to", persistTo] : []),
]);
// The preparation takes seconds: an address taken meanwhile is still named before anything listens.
refuseIf(await problems());

const supervisor = createSupervisor({ cwd: root });
const childEnv = { ...env, CI: env.CI ?? "" };
/**
 * @param {string} name @param {string} command @param {string[]} args
 * @param {{ extraEnv?: NodeJS.ProcessEnv, stdout?: "inherit" | "pipe" }} [options]
 */
const start = (name, command, args, { extraEnv = {}, stdout } = {}) =>
  supervisor.start(name, command, args, { env: { ...childEnv, ...extraEnv }, stdout });
/** @param {number} exitCode */
const stop = (exitCode) => supervisor.stop(exitCode);

// A closed terminal (SIGHUP) may leave stdout and stderr unwritable; the stop must not fail on a message.
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => stop(0));

start("wrangler dev", process.execPath, [
  wrangler,
  "dev",
  "--test-scheduled",
  ...(hasOption(devArgs, "--port") ? [] : ["--port", portText]),
  ...(hasOption(devArgs, "--log-level") ? [] : ["--log-level", "warn"]),
  ...(newsDemo ? ["--var", "NEWS_DEMO:true"] : []),
  ...Object.entries(localVars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ...devArgs,
]);

// The gateway reads the gateway's lines of .dev.vars too (the environment wins), so CONFIG_TYPE=GRPC_XDS_SOTW set
// there makes both the Worker and the gateway's xDS client use the management server, with the same token.
const gatewayChild = start("grpc gateway", process.execPath, [path.join(root, "grpc-gateway", "gateway.mjs")], {
  extraEnv: { ...gateway.fromVars, RATELIMIT_UPSTREAM_URL: gateway.values.RATELIMIT_UPSTREAM_URL, PORT: portText },
  stdout: "pipe",
});

// The gateway's first "serving" (or "waiting for the first xDS snapshot") line goes into the summary instead; every
// other line passes through.
/** @type {Promise<{ address?: string, waitingFor?: string }>} */
const gatewayListening = new Promise((resolve) => {
  let told = false;
  // Started with stdout "pipe", so the child has one.
  const stdout = /** @type {import("node:stream").Readable} */ (gatewayChild.stdout);
  createInterface({ input: stdout }).on("line", (line) => {
    let message;
    /** @type {{ "@message"?: string, address?: string, server?: string }} */
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
  while (!supervisor.stopping) {
    try {
      const response = await fetch(`${devOrigin}/`);
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  clearTimeout(slow);
}

const [, gatewayState] = await Promise.all([workerAnswers(), gatewayListening]);
const ingestionWarning = newsDemo && !supervisor.stopping ? await runNewsIngestion(devOrigin) : undefined;
if (ingestionWarning) console.error(ingestionWarning);
if (!supervisor.stopping) {
  supervisor.watchRuntimes();
  const state = { root, devOrigin, gatewayState, gatewayValues: gateway.values, vars: worker.values, varsOrigin };
  console.log(summary({ ...state, persistTo, newsDemo }));
}
