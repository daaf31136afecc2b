// Changes to the uploaded files: the whole uploaded set, one file, or all of them. Each is validated as the whole set
// it would put in force (the bundled files with the uploads laid over them) before anything is written, and a refused
// change writes nothing, so the set in force stays the last good one.
import type { Database } from "../../shared/db";
import { type ConfigFile, ruleCount } from "../core/config";
import { limitText } from "../core/limits";
import { BundledFileNotDeletable, ConfigRefused, UploadedFileNotFound } from "../errors";
import type { ConfigLoadSettings } from "../settings";
import { recordConfigLoad } from "../stats/telemetry";
import { compileConfig, overlayFiles } from "./files";
import { bundledFiles, installConfig, loadSet, type LoadedConfig } from "./provider";
import { clearConfigFiles, deleteConfigFile, putConfigFile, readConfigSnapshot, replaceConfigFiles } from "./repo";

/** A set validated and ready to write: what the isolate installs once the write succeeded. */
type Checked = Omit<LoadedConfig, "version">;

/** Compiles the set `uploaded` puts in force (counting the load), or throws ConfigRefused with the loader's message. */
function check(settings: ConfigLoadSettings, uploaded: ConfigFile[]): Checked {
  const files = overlayFiles(bundledFiles(settings.service), uploaded);
  const compiled = compileConfig(files, settings);
  recordConfigLoad(settings.service, compiled.ok);
  if (!compiled.ok) throw new ConfigRefused(compiled.error.message);
  return { config: compiled.value, source: "runtime", files, uploaded };
}

/** Installs what was just written in this isolate's view, so that its own next request uses it at once. */
function install(settings: ConfigLoadSettings, checked: Checked, version: number, nowMs: number): LoadedConfig {
  const loaded = { ...checked, version };
  installConfig(settings, loaded, nowMs);
  return loaded;
}

const byName = (a: ConfigFile, b: ConfigFile) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** What a set would load as, for POST /rlconfig/validate: its domains and how many rules. */
export interface Validated {
  domains: readonly string[];
  rules: number;
}

/** Compiles the set `uploaded` would put in force, counting and writing nothing; throws ConfigRefused as check does. */
function dryRun(settings: ConfigLoadSettings, uploaded: ConfigFile[]): Validated {
  const compiled = compileConfig(overlayFiles(bundledFiles(settings.service), uploaded), settings);
  if (!compiled.ok) throw new ConfigRefused(compiled.error.message);
  return { domains: compiled.value.domains, rules: ruleCount(compiled.value) };
}

/** POST /rlconfig/validate: what PUT /rlconfig/files with `files` would load, or its refusal; changes nothing. */
export const validateUploads = (settings: ConfigLoadSettings, files: ConfigFile[]): Validated =>
  dryRun(settings, files);

/** The uploaded files with `file` added, or replacing the file of its name, within RATELIMIT_CONFIG_MAX_FILES. */
function withFile(settings: ConfigLoadSettings, files: ConfigFile[], file: ConfigFile): ConfigFile[] {
  const uploaded = [...files.filter((other) => other.name !== file.name), file].sort(byName);
  const maxFiles = { max: settings.service.RATELIMIT_CONFIG_MAX_FILES, setting: "RATELIMIT_CONFIG_MAX_FILES" };
  if (uploaded.length > maxFiles.max) {
    throw new ConfigRefused(`${file.name} would make ${uploaded.length} uploaded files, more than ${limitText(maxFiles)}`);
  }
  return uploaded;
}

/** POST /rlconfig/validate/{name}: what PUT /rlconfig/files/{name} would load, or its refusal; changes nothing. */
export async function validateUpload(db: Database, settings: ConfigLoadSettings, file: ConfigFile): Promise<Validated> {
  const { files } = await readConfigSnapshot(db);
  return dryRun(settings, withFile(settings, files, file));
}

/** PUT /rlconfig/files: the uploaded files become exactly `files`, over the bundled set. */
export async function replaceUploads(
  db: Database,
  settings: ConfigLoadSettings,
  files: ConfigFile[],
  nowMs: number,
): Promise<LoadedConfig> {
  const checked = check(settings, files);
  return install(settings, checked, await replaceConfigFiles(db, files), nowMs);
}

/** PUT /rlconfig/files/{name}: adds the file, or replaces the uploaded (or bundled) file of its name. */
export async function putUpload(
  db: Database,
  settings: ConfigLoadSettings,
  file: ConfigFile,
  nowMs: number,
): Promise<LoadedConfig> {
  const { state, files } = await readConfigSnapshot(db);
  const checked = check(settings, withFile(settings, files, file));
  return install(settings, checked, await putConfigFile(db, file, state.version), nowMs);
}

/**
 * DELETE /rlconfig/files/{name}: removes an uploaded file (a bundled file of that name is in force again). A name only
 * the bundled set has is refused: bundled files change with config/ and a deploy.
 */
export async function deleteUpload(
  db: Database,
  settings: ConfigLoadSettings,
  name: string,
  nowMs: number,
): Promise<LoadedConfig> {
  const { state, files } = await readConfigSnapshot(db);
  if (!files.some((file) => file.name === name)) {
    if (bundledFiles(settings.service).some((file) => file.name === name)) throw new BundledFileNotDeletable(name);
    throw new UploadedFileNotFound(name);
  }
  const checked = check(
    settings,
    files.filter((file) => file.name !== name),
  );
  return install(settings, checked, await deleteConfigFile(db, name, state.version), nowMs);
}

/** DELETE /rlconfig/files: no uploaded file any more, the bundled set alone is in force. */
export async function clearUploads(db: Database, settings: ConfigLoadSettings, nowMs: number): Promise<LoadedConfig> {
  const version = await clearConfigFiles(db);
  const loaded = loadSet(settings, { version, source: "bundled" }, []);
  installConfig(settings, loaded, nowMs);
  return loaded;
}
