// Loaded into an agent started by a test (node --import): holds the commit of a push, at the rename of its state
// record, until the test lets it go, so that requests arriving during a commit can be driven over real HTTP. The
// commit marks its start with <HOLD_COMMIT_DIR>/commit-started and waits for <HOLD_COMMIT_DIR>/commit-go.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";

const dir = process.env.HOLD_COMMIT_DIR;
if (dir) {
  const rename = fs.promises.rename;
  fs.promises.rename = async (from, to) => {
    if (path.basename(String(to)) === ".agent-state.json") {
      fs.writeFileSync(path.join(dir, "commit-started"), "");
      while (!fs.existsSync(path.join(dir, "commit-go"))) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return rename(from, to);
  };
  // The agent's `import { rename } from "node:fs/promises"` reads the patched one.
  syncBuiltinESMExports();
}
