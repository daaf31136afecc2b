// Which YAML files make up a configuration set and how a set is compiled: the bundled files the settings select, the
// uploaded files laid over them, and the loader run with the settings' rules. Free of the generated bundle, so that
// scripts/bundle-ratelimit-config.mjs checks config/ with this very code before it writes the bundle.
import { loadConfig, type ConfigFile } from "../core/config";
import { configLimits, type ConfigLoadSettings, type RateLimitSettings } from "../settings";

const byName = (a: ConfigFile, b: ConfigFile) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The directory under config/ the settings read: RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY, "" for config/ itself. */
export function bundledDirectory(settings: RateLimitSettings): string {
  return [settings.RUNTIME_SUBDIRECTORY, settings.RUNTIME_APPDIRECTORY]
    .flatMap((part) => part.split("/"))
    .filter((part) => part !== "" && part !== ".")
    .join("/");
}

/** The files of `bundle` (keyed by path under config/) that the settings select: *.yaml directly in their directory. */
export function selectBundledFiles(settings: RateLimitSettings, bundle: Record<string, string>): ConfigFile[] {
  const directory = bundledDirectory(settings);
  const prefix = directory === "" ? "" : `${directory}/`;
  return Object.entries(bundle)
    .filter(([path]) => path.startsWith(prefix) && !path.slice(prefix.length).includes("/"))
    .map(([path, text]) => ({ name: path.slice(prefix.length), text }))
    .filter((file) => file.name.endsWith(".yaml"))
    .filter((file) => !(settings.RUNTIME_IGNOREDOTFILES && file.name.startsWith(".")))
    .sort(byName);
}

/**
 * The set in force: the bundled files with the uploaded ones laid over them. An uploaded file replaces the bundled
 * file of the same name; the others add to the bundled set.
 */
export function overlayFiles(bundled: ConfigFile[], uploaded: ConfigFile[]): ConfigFile[] {
  const names = new Set(uploaded.map((file) => file.name));
  return [...bundled.filter((file) => !names.has(file.name)), ...uploaded].sort(byName);
}

/** Validates a set of files with the settings' merge rule and limits. */
export function compileConfig(files: ConfigFile[], { service, fixedWindowOnly }: ConfigLoadSettings) {
  return loadConfig(files, {
    mergeDomainConfig: service.MERGE_DOMAIN_CONFIG,
    limits: configLimits(service),
    fixedWindowOnly,
    strictUpstream: service.RATELIMIT_STRICT_UPSTREAM_CONFIG,
  });
}
