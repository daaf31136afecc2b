// The Worker as `wrangler deploy` would upload it, built with --dry-run into a directory: used by the bundle-size
// check and the startup benchmark, on this checkout or on another commit's worktree.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { root } from "../test/support/processes.mjs";
import { wranglerEnv } from "../test/support/wrangler-dev.mjs";

/**
 * Bundles the Worker of `cwd` (with this checkout's wrangler) into `outdir`.
 * @param {{ cwd?: string, outdir: string, metafile?: string }} options
 * @returns {{ ok: true, scriptPath: string, bytes: number, gzip: number } | { ok: false, output: string }}
 */
export function buildWorkerBundle({ cwd = root, outdir, metafile }) {
  const wrangler = path.join(root, "node_modules", ".bin", process.platform === "win32" ? "wrangler.cmd" : "wrangler");
  const args = ["deploy", "--dry-run", "--outdir", outdir, ...(metafile ? ["--metafile", metafile] : [])];
  const build = spawnSync(wrangler, args, {
    cwd,
    env: wranglerEnv(),
    encoding: "utf8",
    shell: process.platform === "win32",
  });
  if (build.status !== 0) {
    return {
      ok: false,
      output: `${build.stdout}${build.stderr}\nwrangler deploy --dry-run failed (exit ${build.status ?? build.signal})`,
    };
  }
  // The Worker is one module; the source map beside it is not uploaded as code.
  const [name, ...more] = readdirSync(outdir).filter((file) => /\.m?js$/.test(file));
  if (name === undefined || more.length > 0) return { ok: false, output: `expected one module in ${outdir}` };
  const scriptPath = path.join(outdir, name);
  const code = readFileSync(scriptPath);
  return { ok: true, scriptPath, bytes: code.length, gzip: gzipSync(code).length };
}
