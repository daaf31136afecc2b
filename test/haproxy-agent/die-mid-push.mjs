// Run by a test as a child process (node die-mid-push.mjs <config-dir> <reloads-file> <moves | "reload">): applies
// version 1, then dies (SIGKILL, as the OOM killer or a power cut) pushing version 2: after that many of its swap's
// renames, or, given "reload", from its reload command, once the swap is done and before any reload ran.
import { rename } from "node:fs/promises";
import { bundleDigest, createApplier } from "../../haproxy-agent/apply.mjs";

const [configDir, reloads, when] = process.argv.slice(2);
const files = (version) => ({
  "haproxy.cfg": `global\n# v${version}\n`,
  "domain2backend.map": `a.example bk_${version}\n`,
  "certs/site.pem": `site ${version}\n`,
});
const bundle = (version) => ({
  version,
  digest: bundleDigest(files(version)),
  onlyIfNewer: false,
  files: files(version),
  pushId: `p-${version}`,
});
const options = { configDir, haproxy: "true", timeoutMs: 10_000, log: () => {} };

const first = createApplier({ ...options, reloadCmd: `echo reload >> ${reloads}` });
await first.start();
await first.apply(bundle(1));

let moves = 0;
/** @type {typeof rename} */
const dying = async (from, to) => {
  await rename(from, to);
  if (++moves === Number(when)) process.kill(process.pid, "SIGKILL");
};
const reloadCmd = when === "reload" ? "kill -9 $PPID" : `echo reload >> ${reloads}`;
const second = createApplier({ ...options, reloadCmd, rename: dying });
await second.start();
await second.apply(bundle(2));
