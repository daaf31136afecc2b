#!/usr/bin/env node
// `npm run ratelimit:check -- <files or folders>`: checks rate limit YAML files before they go live, for CI pipelines.
// The files (a folder stands for the *.yaml files directly in it, as the Worker reads its directory) are loaded as one
// set with the Worker's own loader (src/ratelimit/config/set-check.ts, built for Node with esbuild) and the settings
// of wrangler.toml's [vars], overridden by the environment (e.g. BACKEND_TYPE=memcache, MERGE_DOMAIN_CONFIG=true).
//
// Prints `ok: <n> files, <n> rules, domains: <...>` and exits 0, or prints the loader's message, word for word what
// PUT /rlconfig/files answers for the same files, then `  at <path>:<line>`, and exits 1. Exits 2 on a usage error.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { importBuiltForNode, wranglerVars } from "./ratelimit-loader.mjs";

const root = path.join(import.meta.dirname, "..");

/**
 * @param {string} problem
 * @returns {never}
 */
function usage(problem) {
  console.error(`${problem}\nusage: npm run ratelimit:check -- <file.yaml | folder> ...`);
  process.exit(2);
}

/**
 * Each argument's files: the file itself, or a folder's *.yaml files (not its subfolders), by name.
 * @param {string[]} args
 */
function filesOf(args) {
  const paths = args.flatMap((arg) => {
    let stat;
    try {
      stat = statSync(arg);
    } catch {
      usage(`${arg}: no such file or folder`);
    }
    if (!stat.isDirectory()) return [arg];
    return readdirSync(arg)
      .filter((name) => name.endsWith(".yaml") && statSync(path.join(arg, name)).isFile())
      .sort()
      .map((name) => path.join(arg, name));
  });
  const byName = new Map();
  for (const file of paths) {
    const name = path.basename(file);
    if (byName.has(name) && byName.get(name) !== file)
      usage(`${file} and ${byName.get(name)}: two files named ${name}`);
    byName.set(name, file);
  }
  return [...byName.entries()].map(([name, file]) => ({ name, path: file, text: readFileSync(file, "utf8") }));
}

const args = process.argv.slice(2);
if (args.length === 0) usage("no files or folders given");
const files = filesOf(args);
if (files.length === 0) usage(`no .yaml files in ${args.join(", ")}`);
const { checkConfigSet } = await importBuiltForNode("set-check.ts");
const result = checkConfigSet(
  files.map(({ name, text }) => ({ name, text })),
  { ...wranglerVars(), ...process.env },
);
if (result.ok) {
  const { rules, domains } = result.value;
  console.log(`ok: ${files.length} files, ${rules} rules, domains: ${domains.join(", ")}`);
} else {
  const { message, line } = result.error;
  console.error(message);
  const file = files.find(({ name }) => name === result.error.file);
  if (file) console.error(`  at ${file.path}${line === undefined ? "" : `:${line}`}`);
  process.exit(1);
}
