// `npm start`'s watchdog: reads from its stdin the processes the supervisor (scripts/start.mjs) runs, one
// "<pid> <start time>" a line, and when that pipe closes without the supervisor having stopped them (it was killed
// with SIGKILL, or crashed) stops every one still running and whatever they started: SIGTERM, then SIGKILL after 5 s.
// It outlives signals sent to the whole process group (Ctrl-C, a closed terminal): its work starts when the pipe
// closes, which a live supervisor does only after stopping everything, so it then finds nothing left.
import { createInterface } from "node:readline";
import { descendantsOf, processTable, signalEach, stillRunning, STOP_GRACE_MS } from "./processes.mjs";

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => {});

/** @type {Map<number, import("./processes.mjs").ProcessInfo>} */
const known = new Map();

createInterface({ input: process.stdin })
  .on("line", (line) => {
    const [pid, start] = line.trim().split(" ");
    if (pid) known.set(Number(pid), { pid: Number(pid), ppid: 0, pgid: 0, name: "", start, zombie: false });
  })
  .on("close", async () => {
    const table = processTable();
    const left = stillRunning([...known.values()]);
    const tree = [
      ...left,
      ...descendantsOf(
        left.map((entry) => entry.pid),
        table,
      ),
    ];
    if (tree.length === 0) process.exit(0);
    console.error(`npm start's watchdog: the supervisor is gone; stopping the ${tree.length} processes it left`);
    signalEach(tree, "SIGTERM");
    const deadline = Date.now() + STOP_GRACE_MS;
    while (Date.now() < deadline && stillRunning(tree).length > 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    signalEach(stillRunning(tree), "SIGKILL");
    process.exit(0);
  });
