// The bundling step's check of config/ (scripts/bundle-ratelimit-config.mjs bundles this module for Node): every
// directory's *.yaml files are loaded as the Worker loads the set of its RUNTIME_APPDIRECTORY, so that a file the
// Worker would refuse is refused before it is bundled, with its path and line.
import { lineOfConfigError } from "./error-line";
import { compileConfig, selectBundledFiles } from "./files";
import { configLoadSettings } from "../settings";

export interface BundleProblem {
  /** The file's path under config/. */
  path: string;
  /** The line the message is about, when it names one. */
  line?: number;
  /** The loader's message, without the file name it starts with. */
  message: string;
}

/** The directories of `bundle` (paths under config/) that hold *.yaml files directly; "" is config/ itself. */
function yamlDirectories(bundle: Record<string, string>): string[] {
  const directories = Object.keys(bundle)
    .filter((path) => path.endsWith(".yaml"))
    .map((path) => path.slice(0, Math.max(0, path.lastIndexOf("/"))));
  return [...new Set(directories)].sort();
}

/**
 * The first problem of each directory's set, loaded with the settings `vars` give (wrangler.toml's [vars]) but with
 * that directory as the application directory. No problems: the Worker loads whichever directory it is told to read.
 */
export function checkBundle(bundle: Record<string, string>, vars: Record<string, string>): BundleProblem[] {
  return yamlDirectories(bundle).flatMap((directory) => {
    const settings = configLoadSettings({ ...vars, RUNTIME_SUBDIRECTORY: "", RUNTIME_APPDIRECTORY: directory || "." });
    const files = selectBundledFiles(settings.service, bundle);
    const compiled = compileConfig(files, settings);
    if (compiled.ok) return [];
    const { file, message } = compiled.error;
    const path = directory === "" ? file : `${directory}/${file}`;
    const bare = message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message;
    const line = lineOfConfigError(bundle[path] ?? "", bare);
    return [{ path, ...(line !== undefined && { line }), message: bare }];
  });
}
