// Which rate-limit configuration is in force in this isolate: the bundled YAML of config/, with the files uploaded to
// D1 laid over it (an uploaded file replaces the bundled file of its name, the others add to the bundled set).
// Isolates re-check the D1 state at most every CONFIG_CHECK_INTERVAL_MS, so a new set reaches every isolate within two
// intervals, and a failed load (a set that does not compile, or a D1 read that fails) keeps the previous config.
import type { ConfigFile, RateLimitConfig } from "../core/config";
import { bundledConfigFiles } from "./bundled.gen";
import type { Database } from "../../shared/db";
import { perIsolate } from "../../shared/isolate";
import { logError, logInfo } from "../../shared/log";
import { compileConfig, overlayFiles, selectBundledFiles } from "./files";
import { readConfigFiles, readConfigState, type ConfigSetState } from "./repo";
import type { ConfigLoadSettings, RateLimitSettings } from "../settings";
import { recordConfigLoad } from "../stats/telemetry";

/** How stale an isolate's view of the D1 state may get; the issue asks for every isolate within 2 s. */
export const CONFIG_CHECK_INTERVAL_MS = 1000;

export interface LoadedConfig {
  /** The config in force; undefined when nothing could be loaded. */
  config: RateLimitConfig | undefined;
  /** "runtime" once files have been uploaded (PUT /rlconfig/files...), "bundled" while none ever were or after DELETE. */
  source: ConfigSetState["source"];
  version: number;
  /** Every file of the set: the bundled ones the uploads leave, and the uploaded ones. */
  files: ConfigFile[];
  /** The uploaded files of the set (laid over the bundled ones). */
  uploaded: ConfigFile[];
  /** The message of the last failed load, if the last attempt failed. */
  lastError?: string;
}

/**
 * The bundled files the settings select: *.yaml directly in RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY of config/. With
 * CONFIG_TYPE=GRPC_XDS_SOTW none: the rules come from the xDS client's uploads only (/json answers "no rate limit
 * configuration loaded" until its first snapshot, as the reference does before its first xDS config).
 */
export function bundledFiles(settings: RateLimitSettings, bundle = bundledConfigFiles): ConfigFile[] {
  return settings.CONFIG_TYPE === "GRPC_XDS_SOTW" ? [] : selectBundledFiles(settings, bundle);
}

/** The set the D1 state and the uploaded files describe, laid over the bundled files; a failure keeps `previous`. */
export function loadSet(
  settings: ConfigLoadSettings,
  state: ConfigSetState,
  uploaded: ConfigFile[],
  previous?: LoadedConfig,
): LoadedConfig {
  if (settings.service.CONFIG_TYPE === "GRPC_XDS_SOTW" && state.source === "bundled") {
    return { config: undefined, source: "bundled", version: state.version, files: [], uploaded: [] };
  }
  const files = overlayFiles(bundledFiles(settings.service), uploaded);
  const compiled = compileConfig(files, settings);
  recordConfigLoad(settings.service, compiled.ok);
  const { source, version } = state;
  if (!compiled.ok) {
    logError("ratelimit: error loading new configuration", { message: compiled.error.message });
    // With nothing to keep, requests fail clearly ("no rate limit configuration loaded").
    const kept = previous ?? { config: undefined, source, version, files, uploaded };
    return { ...kept, lastError: compiled.error.message };
  }
  logInfo("ratelimit: configuration loaded", { source, version, domains: compiled.value.domains });
  return { config: compiled.value, source, version, files, uploaded };
}

interface IsolateState {
  loaded: LoadedConfig;
  checkedAt: number;
}

interface View {
  state?: IsolateState;
  /** The clock of the request re-reading the D1 state right now, if one is. */
  checkingSince?: number;
}

/** The isolate's view of the config in force, one per settings object (that is, per env). */
const viewOf = perIsolate("ratelimit config view", (_settings: ConfigLoadSettings): View => ({}));

/**
 * Re-reads the D1 state and installs what it says in the view. Several requests of a cold isolate may be reading at
 * once: each checks the view again after its reads, and compiles (and counts a load) only a set that no other
 * request has installed meanwhile. Compiling and installing are synchronous, so two never interleave.
 */
async function refresh(db: Database, settings: ConfigLoadSettings, view: View, nowMs: number): Promise<LoadedConfig> {
  const setState = await readConfigState(db);
  const installed = () => {
    const loaded = view.state?.loaded;
    return loaded && loaded.version === setState.version && loaded.source === setState.source ? loaded : undefined;
  };
  const uploaded = !installed() && setState.source === "runtime" ? await readConfigFiles(db) : [];
  const loaded = installed() ?? loadSet(settings, setState, uploaded, view.state?.loaded);
  if (!view.state || view.state.checkedAt <= nowMs) view.state = { loaded, checkedAt: nowMs };
  return loaded;
}

/**
 * The configuration for this request. A request never waits on another request's D1 read: workerd would run the
 * waiter's continuation inside the reader's request, whose I/O the waiter may not touch (its Durable Object calls
 * then fail with "Cannot perform I/O on behalf of a different request", or hang once the reader has finished).
 * So the request that finds the view stale re-reads it itself, and the requests arriving meanwhile keep using the
 * current view (for at most another interval). With no view yet, each request loads its own.
 * @param nowMs the request's clock, in milliseconds.
 */
export async function currentConfig(db: Database, settings: ConfigLoadSettings, nowMs: number): Promise<LoadedConfig> {
  const view = viewOf(settings);
  const state = view.state;
  if (state) {
    const fresh = nowMs - state.checkedAt < CONFIG_CHECK_INTERVAL_MS;
    const beingChecked = view.checkingSince !== undefined && nowMs - view.checkingSince < CONFIG_CHECK_INTERVAL_MS;
    if (fresh || beingChecked) return state.loaded;
  }
  const since = nowMs;
  view.checkingSince = since;
  try {
    return await refresh(db, settings, view, nowMs);
  } catch (error) {
    // D1 failing for a moment must not fail the decisions the set in force can make: it stays, as a set that fails to
    // compile does, and is re-read after another interval. An isolate with no set yet has nothing to decide with.
    const kept = view.state ?? state;
    if (!kept) throw error;
    logError("ratelimit: could not re-read the configuration set; the one in force stays", error);
    if (kept.checkedAt <= nowMs) view.state = { loaded: kept.loaded, checkedAt: nowMs };
    return kept.loaded;
  } finally {
    if (view.checkingSince === since) view.checkingSince = undefined;
  }
}

/** Installs a set this isolate has just written, so its own next request uses it without waiting. */
export function installConfig(settings: ConfigLoadSettings, loaded: LoadedConfig, nowMs: number): void {
  viewOf(settings).state = { loaded, checkedAt: nowMs };
}
