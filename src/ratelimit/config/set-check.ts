// The check behind `npm run ratelimit:check` (scripts/ratelimit-check.mjs bundles this module for Node): a set of YAML
// files loaded with the Worker's own loader and the settings given, answering what would load or the loader's message,
// word for word what PUT /rlconfig/files answers for the same files, with the line it is about.
import { type ConfigFile, ruleCount } from "../core/config";
import { lineOfConfigError } from "./error-line";
import { compileConfig } from "./files";
import { configLoadSettings } from "../settings";

import { err, ok, type Result } from "../../shared/result";

/** What a set would load as, or the loader's message with the file and line it is about. */
export type SetCheck = Result<
  { domains: readonly string[]; rules: number },
  { message: string; file: string; line?: number }
>;

/** Loads `files` as one set with the settings `vars` give (wrangler.toml's [vars] and the environment). */
export function checkConfigSet(files: ConfigFile[], vars: Record<string, string>): SetCheck {
  const compiled = compileConfig(files, configLoadSettings(vars));
  if (compiled.ok) return ok({ domains: compiled.value.domains, rules: ruleCount(compiled.value) });
  const { file, message } = compiled.error;
  const bare = message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message;
  const line = lineOfConfigError(files.find((candidate) => candidate.name === file)?.text ?? "", bare);
  return err({ message, file, ...(line !== undefined && { line }) });
}
