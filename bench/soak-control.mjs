// The control arm of `npm run bench:soak`: a Worker that only answers "ok" (bench/soak-control/) under its own
// wrangler dev, sent GET at the soak's rate while the soak runs, its processes' memory sampled alongside. Any growth
// it shows is the runtime's and wrangler's own, with none of this project's code.
import path from "node:path";
import { commandLine, descendantsOf, residentKiB } from "../scripts/start/processes.mjs";
import { root } from "../test/support/processes.mjs";
import { startWranglerDev } from "../test/support/wrangler-dev.mjs";

const configPath = path.join(root, "bench", "soak-control", "wrangler.toml");

/** Starts the control Worker (in its own process group, stopped at the latest when this process exits). */
export async function startControl() {
  const server = await startWranglerDev({}, { name: "soak control", configPath, migrate: false, readyPath: "/" });
  const url = `${server.url}/`;
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
      for (const entry of descendantsOf([server.pgid])) {
        if (entry.name !== "workerd") continue;
        const line = commandLine(entry.pid);
        const proxy = line.includes(`:${server.port} `) || line.endsWith(`:${server.port}`);
        kib[proxy ? "control workerd proxy" : "control workerd user"] = residentKiB(entry.pid);
      }
      return kib;
    },
    stop: () => server.stop(),
  };
}
