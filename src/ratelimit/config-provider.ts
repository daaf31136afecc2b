// Which rate-limit configuration is in force in this isolate: the bundled YAML of config/, or the runtime set
// from D1 once one exists. Isolates re-check the D1 state at most every CONFIG_CHECK_INTERVAL_MS, so a new set
// reaches every isolate within that interval plus one D1 read, and a failed load keeps the previous config.
import { loadConfig, type ConfigFile, type RateLimitConfig } from "./core/config";
import { bundledConfigFiles } from "./bundled-config.gen";
import type { Database } from "../shared/db";
import { logError, logInfo } from "../shared/log";
import { readConfigFiles, readConfigState, type ConfigSetState } from "./config-repo";
import type { RateLimitSettings } from "./settings";
import { recordConfigLoad } from "./stats/isolate";

/** How stale an isolate's view of the D1 state may get; the issue asks for every isolate within 2 s. */
export const CONFIG_CHECK_INTERVAL_MS = 1000;

export interface LoadedConfig {
  /** The config in force; undefined when nothing could be loaded. */
  config: RateLimitConfig | undefined;
  source: ConfigSetState["source"];
  version: number;
  files: ConfigFile[];
  /** The message of the last failed load, if the last attempt failed. */
  lastError?: string;
}

/** The bundled files the settings select: *.yaml directly in RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY of config/. */
export function bundledFiles(settings: RateLimitSettings, bundle: Record<string, string> = bundledConfigFiles): ConfigFile[] {
  const directory = [settings.RUNTIME_SUBDIRECTORY, settings.RUNTIME_APPDIRECTORY]
    .flatMap((part) => part.split("/"))
    .filter((part) => part !== "" && part !== ".")
    .join("/");
  const prefix = directory === "" ? "" : `${directory}/`;
  return Object.entries(bundle)
    .filter(([path]) => path.startsWith(prefix) && !path.slice(prefix.length).includes("/"))
    .map(([path, text]) => ({ name: path.slice(prefix.length), text }))
    .filter((file) => file.name.endsWith(".yaml"))
    .filter((file) => !(settings.RUNTIME_IGNOREDOTFILES && file.name.startsWith(".")))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Validates a set of files with the settings' merge rule. */
export function compileConfig(files: ConfigFile[], settings: RateLimitSettings) {
  return loadConfig(files, { mergeDomainConfig: settings.MERGE_DOMAIN_CONFIG });
}

interface IsolateState {
  loaded: LoadedConfig;
  checkedAt: number;
}

interface View {
  state?: IsolateState;
  refreshing?: Promise<IsolateState>;
}

// One view per settings object (settings are parsed once per env), so an env with other settings, such as
// another MERGE_DOMAIN_CONFIG, never sees a config compiled under different rules.
const views = new WeakMap<RateLimitSettings, View>();

function viewOf(settings: RateLimitSettings): View {
  let view = views.get(settings);
  if (!view) views.set(settings, (view = {}));
  return view;
}

async function refresh(db: Database, settings: RateLimitSettings, previous: IsolateState | undefined, nowMs: number) {
  const setState = await readConfigState(db);
  if (previous && previous.loaded.version === setState.version && previous.loaded.source === setState.source) {
    return { loaded: previous.loaded, checkedAt: nowMs };
  }
  const files = setState.source === "runtime" ? await readConfigFiles(db) : bundledFiles(settings);
  const compiled = compileConfig(files, settings);
  recordConfigLoad(settings, compiled.ok);
  if (!compiled.ok) {
    logError("ratelimit: error loading new configuration", { message: compiled.error.message });
    // The reference keeps the previous config after a failed reload; with none, requests fail clearly.
    const kept = previous?.loaded ?? { config: undefined, source: setState.source, version: setState.version, files };
    return { loaded: { ...kept, lastError: compiled.error.message }, checkedAt: nowMs };
  }
  logInfo("ratelimit: configuration loaded", { source: setState.source, version: setState.version, domains: compiled.value.domains });
  return { loaded: { config: compiled.value, source: setState.source, version: setState.version, files }, checkedAt: nowMs };
}

/**
 * The configuration for this request. Concurrent requests that find the view stale share one refresh.
 * @param nowMs the request's clock, in milliseconds.
 */
export async function currentConfig(db: Database, settings: RateLimitSettings, nowMs: number): Promise<LoadedConfig> {
  const view = viewOf(settings);
  if (view.state && nowMs - view.state.checkedAt < CONFIG_CHECK_INTERVAL_MS) return view.state.loaded;
  view.refreshing ??= refresh(db, settings, view.state, nowMs)
    .then((next) => (view.state = next))
    .finally(() => (view.refreshing = undefined));
  return (await view.refreshing).loaded;
}

/** Installs a set this isolate has just written, so its own next request uses it without waiting. */
export function installConfig(settings: RateLimitSettings, loaded: LoadedConfig, nowMs: number): void {
  viewOf(settings).state = { loaded, checkedAt: nowMs };
}
