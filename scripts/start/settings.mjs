// The settings `npm start` checks before it starts anything: the env the Worker will see (wrangler.toml [vars], then
// .dev.vars or the --env-file files, then --var, as wrangler dev 4.86 merges them) through every service's settings
// schema (src/settings-check.ts, bundled for Node with esbuild), the credentials the local flows need, and the
// gateway's env through grpc-gateway/settings.mjs. Each problem names the setting, where its value came from (never
// the value: it may be a secret) and what is allowed.
import { spawn } from "node:child_process";
import path from "node:path";
import { build } from "esbuild";
import { GatewaySettingsSchema } from "../../grpc-gateway/settings.mjs";
import { cliVars, optionValue, optionValues } from "./args.mjs";

/** The credentials the summary prints and every local flow needs: unset or empty, npm start refuses to start. */
export const REQUIRED_LOCALLY = [
  "PROXY_ADMIN_USERNAME",
  "PROXY_ADMIN_PASSWORD",
  "MASTER_KEY",
  "JWT_SECRET",
  "RATELIMIT_ADMIN_TOKEN",
];

/** The variables of .dev.vars the gateway takes too (the environment wins), so that both sides agree. */
const GATEWAY_VARIABLE = /^(CONFIG_|XDS_|GRPC_|FORCE_START_|RATELIMIT_ADMIN_TOKEN$)/;

/** @param {unknown} value */
export const isSet = (value) => value !== undefined && value !== "";

/** @typedef {{ values: Record<string, unknown>, origins: Record<string, string> }} WorkerEnv */
/** @typedef {(env: Record<string, unknown>) => { setting: string, message: string }[]} SettingsProblems */

/**
 * The env the Worker will see, and where each variable came from. wrangler's own functions read wrangler.toml and
 * the vars files (scripts/start/worker-vars.mjs, in a process of its own); --var is applied here, as wrangler applies
 * it last.
 * @param {string} root @param {string[]} args
 * @returns {Promise<WorkerEnv>}
 */
export async function workerEnv(root, args) {
  const envFiles = optionValues(args, "--env-file", { array: true });
  const request = {
    config: path.resolve(root, optionValue(args, "--config", { aliases: ["-c"] }) ?? "wrangler.toml"),
    env: optionValue(args, "--env", { aliases: ["-e"] }),
    envFiles,
  };
  const read = await readWorkerVars(root, request);
  const fileOrigin = `set in ${envFiles.length > 0 ? envFiles.join(", ") : ".dev.vars"}`;
  /** @type {WorkerEnv["values"]} */
  const values = {};
  /** @type {WorkerEnv["origins"]} */
  const origins = {};
  for (const [name, { fromFile, value }] of Object.entries(read)) {
    values[name] = value;
    origins[name] = fromFile ? fileOrigin : "set in wrangler.toml [vars]";
  }
  for (const [name, value] of Object.entries(cliVars(args))) {
    values[name] = value;
    origins[name] = "set by --var";
  }
  return { values, origins };
}

/**
 * What scripts/start/worker-vars.mjs prints: each variable's value and whether a vars file (not wrangler.toml) set it.
 * @param {string} root @param {{ config: string, env?: string, envFiles: string[] }} request
 * @returns {Promise<Record<string, { fromFile: boolean, value: unknown }>>}
 */
function readWorkerVars(root, request) {
  const child = spawn(
    process.execPath,
    [path.join(root, "scripts", "start", "worker-vars.mjs"), JSON.stringify(request)],
    {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) =>
    child.on("close", (code) => {
      const lines = stdout.trimEnd().split("\n");
      // split gives at least one element, so the last one is there.
      if (code === 0) return resolve(JSON.parse(/** @type {string} */ (lines.at(-1))));
      reject(new Error(`wrangler could not read the Worker's variables:\n${stdout}${stderr}`.trimEnd()));
    }),
  );
}

/**
 * The settings check of src/settings-check.ts, bundled in memory (a few hundred ms) and imported.
 * @param {string} root
 * @returns {Promise<SettingsProblems>}
 */
export async function loadSettingsCheck(root) {
  const result = await build({
    entryPoints: [path.join(root, "src", "settings-check.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    write: false,
    logLevel: "silent",
    // Some dependencies (yaml) are CommonJS and require Node's modules; an ES module has no `require` of its own.
    banner: {
      js: `import { createRequire } from "node:module"; const require = createRequire(${JSON.stringify(path.join(root, "package.json"))});`,
    },
  });
  const source = Buffer.from(result.outputFiles[0].text).toString("base64");
  const { settingsProblems } = await import(`data:text/javascript;base64,${source}`);
  return settingsProblems;
}

/**
 * The gateway's env: npm start's environment, the gateway's lines of the Worker's vars where the environment does
 * not set them, the Worker's origin and the port (so that the gateway's own PORT default is never what fails).
 * @param {WorkerEnv} worker @param {NodeJS.ProcessEnv} processEnv
 * @param {{ upstreamUrl: string, port: string }} dev
 */
export function gatewayEnv(worker, processEnv, { upstreamUrl, port }) {
  const fromVars = /** @type {[string, string][]} */ (
    Object.entries(worker.values).filter(
      ([name, value]) => GATEWAY_VARIABLE.test(name) && typeof value === "string" && processEnv[name] === undefined,
    )
  );
  /** @type {Record<string, string | undefined>} */
  const values = {
    ...processEnv,
    ...Object.fromEntries(fromVars),
    RATELIMIT_UPSTREAM_URL: processEnv.RATELIMIT_UPSTREAM_URL || upstreamUrl,
    PORT: String(port),
  };
  const origins = Object.fromEntries(fromVars.map(([name]) => [name, worker.origins[name]]));
  // Made here from wrangler dev's port: a bad one is named once, as --port or PORT.
  const derived = new Set(["PORT", ...(processEnv.RATELIMIT_UPSTREAM_URL ? [] : ["RATELIMIT_UPSTREAM_URL"])]);
  return { values, origins, derived, fromVars: Object.fromEntries(fromVars) };
}

/**
 * Every problem of the Worker's env and the gateway's, one line each: `NAME (where it came from): what is allowed`.
 * @param {SettingsProblems} settingsProblems @param {WorkerEnv} worker
 * @param {ReturnType<typeof gatewayEnv>} gateway
 */
export function settingProblems(settingsProblems, worker, gateway) {
  /** @type {Set<string>} */
  const lines = new Set();
  /** @param {Record<string, string>} origins @param {string} name @param {string} fallback */
  const origin = (origins, name, fallback) => origins[name] ?? fallback;
  for (const name of REQUIRED_LOCALLY) {
    if (isSet(worker.values[name])) continue;
    const where = origin(worker.origins, name, "not set");
    lines.add(`${name} (${where}): required locally, and must not be empty (.dev.vars.example has a local value)`);
  }
  for (const { setting, message } of settingsProblems(worker.values)) {
    lines.add(`${setting} (${origin(worker.origins, setting, "not set")}): ${message}`);
  }
  const parsed = GatewaySettingsSchema.safeParse(gateway.values);
  for (const issue of parsed.error?.issues ?? []) {
    const name = issue.path.join(".");
    if (gateway.derived.has(name)) continue;
    const where = origin(gateway.origins, name, isSet(gateway.values[name]) ? "set in the environment" : "not set");
    lines.add(`${name} (${where}; gRPC gateway): ${issue.message}`);
  }
  return [...lines];
}
