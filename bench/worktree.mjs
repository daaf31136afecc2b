// A git worktree of an earlier commit for "before" figures (BENCH_BASELINE_REF): in a temporary directory, with this
// checkout's node_modules and local settings, removed at the end or when the process exits.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { root } from "../test/support/processes.mjs";

/**
 * @param {string} ref
 * @returns {{ dir: string, remove(): void }}
 */
export function baselineWorktree(ref) {
  const parent = mkdtempSync(path.join(tmpdir(), "bench-baseline-"));
  const dir = path.join(parent, "tree");
  execFileSync("git", ["worktree", "add", "--detach", dir, ref], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    try {
      execFileSync("git", ["worktree", "remove", "--force", dir], {
        cwd: root,
        stdio: ["ignore", "ignore", "inherit"],
      });
    } catch (error) {
      console.error(`git worktree remove --force ${dir} failed: ${error.message}`);
    }
    rmSync(parent, { recursive: true, force: true });
  };
  // On an interruption (stopAllOnSignals exits) or an error, the worktree goes too.
  process.on("exit", remove);
  symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
  // The local settings (git-ignored) the dev server of this checkout reads, so both run with the same ones.
  if (existsSync(path.join(root, ".dev.vars"))) copyFileSync(path.join(root, ".dev.vars"), path.join(dir, ".dev.vars"));
  return { dir, remove };
}
