// How the agent runs `haproxy -c` and the reload command: a time-out is told apart from a failure, and a time-out or a
// stop kills the whole process group, so that what haproxy (or a wrapper script around it) started does not outlive it.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../haproxy-agent/programs.mjs";
import { processEnded, until } from "./agent-process";
import { scratchDirs } from "./scratch-dirs";

const tempDir = scratchDirs("agent-programs-");
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

/**
 * A haproxy stand-in that starts a grandchild as a wrapper script would (a program it does not exec), leaves both
 * process ids and marks its start, then sleeps.
 */
function wrapper() {
  const dir = tempDir();
  const file = path.join(dir, "haproxy");
  writeFileSync(
    file,
    `#!/bin/sh\nsleep 30 >/dev/null 2>&1 &\necho $! > ${dir}/grandchild.pid\necho $$ > ${dir}/child.pid\n` +
      `touch ${dir}/started\nsleep 30\n`,
  );
  chmodSync(file, 0o755);
  const pid = (name: string) => Number(readFileSync(path.join(dir, `${name}.pid`), "utf8"));
  return { file, started: () => existsSync(path.join(dir, "started")), pid };
}

/** Whether the process ends within a second (a killed process takes a moment to go). */
async function endsSoon(pid: number) {
  for (let waited = 0; waited < 1000 && !processEnded(pid); waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return processEnded(pid);
}

describe("haproxy-agent: the programs it runs", () => {
  it("answers a program that exits with its code and output, not as a time-out", async () => {
    expect(await run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], 10_000, env)).toEqual({
      code: 3,
      output: "err\nout",
      timedOut: false,
    });
    expect(await run("/bin/sh", ["-c", "exit 1"], 10_000, env)).toEqual({
      code: 1,
      output: "Command failed: /bin/sh -c exit 1",
      timedOut: false,
    });
    expect(await run("true", [], 10_000, env)).toEqual({ code: 0, output: "", timedOut: false });
  });

  it("kills a program past its time limit with what it started, and says it timed out", async () => {
    const program = wrapper();
    const started = Date.now();
    const result = await run(program.file, ["-c"], 1000, env);
    expect(result).toMatchObject({ code: -1, timedOut: true });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await endsSoon(program.pid("child"))).toBe(true);
    expect(await endsSoon(program.pid("grandchild"))).toBe(true);
  });

  it("kills a program and what it started when its push stops, and that is no time-out", async () => {
    const program = wrapper();
    const stop = new AbortController();
    const running = run(program.file, ["-c"], 30_000, env, stop.signal);
    await until(program.started);
    stop.abort();
    expect(await running).toMatchObject({ code: -1, timedOut: false });
    expect(await endsSoon(program.pid("child"))).toBe(true);
    expect(await endsSoon(program.pid("grandchild"))).toBe(true);
  });
});
