// The control arm of `npm run bench:soak`: a Worker that only answers "ok" (bench/soak-control/) under its own
// wrangler dev, sent GET at the soak's rate while the soak runs, its processes' memory sampled alongside. Any growth
// it shows is the runtime's and wrangler's own, with none of this project's code.
import { spawn } from "node:child_process";
import path from "node:path";
import { commandLine, descendantsOf, residentKiB } from "../scripts/start/processes.mjs";
import { freePort, root } from "../test/support/servers.mjs";

const configPath = path.join(root, "bench", "soak-control", "wrangler.toml");
const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");

/** Starts the control Worker in its own process group; resolves once it answers. */
export async function startControl() {
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const args = ["dev", "--config", configPath, "--ip", "127.0.0.1", "--port", String(port)];
  const child = spawn(process.execPath, [wrangler, ...args, "--inspector-port", String(inspectorPort)], {
    cwd: root,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
    stdio: "ignore",
    detached: true,
  });
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(url)).ok) break;
    } catch {}
    if (child.exitCode !== null || Date.now() > deadline) throw new Error("soak control: wrangler dev did not start");
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const tally = { sent: 0, failed: 0 };
  return {
    /** One GET; a failure is counted, not thrown. */
    async send() {
      tally.sent++;
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
        await response.arrayBuffer();
        if (response.status !== 200) tally.failed++;
      } catch {
        tally.failed++;
      }
    },
    counts: () => ({ ...tally }),
    /** RSS in KiB of the control's two workerd, named as the soak's with "control " before. */
    memory() {
      /** @type {Record<string, number | undefined>} */
      const kib = {};
      for (const entry of descendantsOf([child.pid])) {
        if (entry.name !== "workerd") continue;
        const line = commandLine(entry.pid);
        const proxy = line.includes(`:${port} `) || line.endsWith(`:${port}`);
        kib[proxy ? "control workerd proxy" : "control workerd user"] = residentKiB(entry.pid);
      }
      return kib;
    },
    stop() {
      try {
        process.kill(-(/** @type {number} */ (child.pid)), "SIGKILL");
      } catch {}
    },
  };
}
