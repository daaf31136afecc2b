// The HAProxy agent as an operator runs it (node haproxy-agent/agent.mjs with its token in the environment), on a free
// port of loopback: for the tests of its HTTP server, its signals and its start. stopAgents() kills those still
// running (after each test).
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

export const TOKEN = "agent-test-token";
export const authorization = { Authorization: `Bearer ${TOKEN}` };
const agentPath = path.join(import.meta.dirname, "..", "..", "haproxy-agent", "agent.mjs");
const running = new Set<ChildProcess>();

/**
 * Starts the agent on `configDir`; `haproxy` and `reloadCmd` stand in for the real programs (`true` by default), `args`
 * adds options, `node` options of node itself (before the agent), `env` variables. Resolves once it listens.
 */
export async function startAgent(
  configDir: string,
  options: { haproxy?: string; reloadCmd?: string; args?: string[]; node?: string[]; env?: Record<string, string> },
) {
  const child = spawn(
    process.execPath,
    [...(options.node ?? []), agentPath, "--config-dir", configDir, "--port", "0"].concat([
      "--haproxy",
      options.haproxy ?? "true",
      "--reload-cmd",
      options.reloadCmd ?? "true",
      ...(options.args ?? []),
    ]),
    { env: { PATH: process.env.PATH, HAPROXY_AGENT_TOKEN: TOKEN, ...options.env } },
  );
  running.add(child);
  let output = "";
  const exited = new Promise<number | null>((resolve) => {
    child.on("exit", (code) => {
      running.delete(child);
      resolve(code);
    });
  });
  /** Resolves once the agent's log holds `text`. */
  const logged = (text: string) =>
    new Promise<void>((resolve) => {
      const look = () => {
        if (!output.includes(text)) return;
        child.stdout.off("data", look);
        resolve();
      };
      child.stdout.on("data", look);
      look();
    });
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const listening = logged('"haproxy-agent: listening"');
  const code = await Promise.race([listening.then(() => undefined), exited]);
  if (code !== undefined) throw new Error(`the agent exited (${code}) before it listened: ${output}`);
  const port = Number(/"port":(\d+)/.exec(output)?.[1]);
  return { child, port, url: `http://127.0.0.1:${port}`, exited, logged, output: () => output };
}

/** Kills the agents a test left running. */
export function stopAgents() {
  for (const child of running) child.kill("SIGKILL");
}

/** Resolves once `condition` holds, looking every 20 ms: for an event seen only on disk. */
export async function until(condition: () => boolean) {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Whether no process has this id any more: killed and reaped, rather than left running or waited for. */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Whether a process has ended: gone, or a zombie (dead, its exit not yet collected: an orphan handed to a PID 1 that
 * does not reap, as in some containers).
 */
export function processEnded(pid: number): boolean {
  if (processGone(pid)) return true;
  try {
    return /^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return processGone(pid);
  }
}
