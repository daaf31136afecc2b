// What the two Node scripts that load rate-limit YAML share (bundle-ratelimit-config.mjs at build time,
// ratelimit-check.mjs for CI pipelines): wrangler.toml's [vars], and a module of the Worker's src/ built for Node.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = path.join(import.meta.dirname, "..");

/** The [vars] of wrangler.toml: the settings a deployment and `wrangler dev` load the files with. */
export function wranglerVars() {
  const text = readFileSync(path.join(root, "wrangler.toml"), "utf8");
  const section = text.split(/^\[vars\]\s*$/m)[1]?.split(/^\[/m)[0] ?? "";
  const pairs = section.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:"([^"]*)"|([^\s#]+))/gm);
  return Object.fromEntries([...pairs].map(([, name, quoted, bare]) => [name, quoted ?? bare]));
}

/**
 * A module of src/ (`entry`, relative to src/ratelimit/config/), built for Node into a temporary directory and
 * imported from there.
 * @param {string} entry
 */
export async function importBuiltForNode(entry) {
  const dir = mkdtempSync(path.join(tmpdir(), "ratelimit-loader-"));
  try {
    const outfile = path.join(dir, "built.mjs");
    await build({
      entryPoints: [path.join(root, "src", "ratelimit", "config", entry)],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      logLevel: "error",
      // yaml's CommonJS modules require node:process, which an ES module bundle can only do through a require.
      banner: { js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);' },
    });
    return await import(pathToFileURL(outfile).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
