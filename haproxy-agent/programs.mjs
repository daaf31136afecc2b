// The programs the agent runs, `haproxy -c` and the reload command: with a scrubbed environment, in a process group of
// their own, so that a time-out or a push stopped kills whatever they started (haproxy's own children, the program a
// wrapper script runs) and not only the first process; a time-out is told apart from a failure.
import { spawn } from "node:child_process";

/** Where programs are looked up when the agent itself runs without PATH. */
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Most output kept of each stream: haproxy's alerts are read from it, its tail quoted. */
const MAX_CAPTURE = 10 * 1024 * 1024;
const MAX_OUTPUT = 4000;

/**
 * The whole environment of `haproxy -c` and of the reload command: PATH, nothing else. HAProxy expands `${NAME}` in
 * the configuration from its environment, and its errors quote the expanded text, so anything more (the agent's
 * token first of all) could be read back by whoever writes configuration. haproxy needs no locale or time zone (it
 * reads /etc/localtime itself); a reload command that needs more sets it inline (`FOO=bar cmd`).
 * @param {Record<string, string | undefined>} source the agent's own environment
 * @returns {Record<string, string>}
 */
export function childEnvironment(source) {
  return { PATH: source.PATH || DEFAULT_PATH };
}

/** What a stream writes, up to MAX_CAPTURE bytes. @param {import("node:stream").Readable} stream */
function capture(stream) {
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  stream.on("data", (/** @type {Buffer} */ chunk) => {
    if (size >= MAX_CAPTURE) return;
    chunks.push(chunk);
    size += chunk.length;
  });
  return () => Buffer.concat(chunks).toString("utf8").slice(0, MAX_CAPTURE);
}

/**
 * Runs a program with the scrubbed environment; resolves with its exit code and output (never rejects for a
 * non-zero exit). `timedOut`: it did not end within `timeoutMs` and was killed, with everything in its process group;
 * `signal` kills them the same way (the client went away, the agent stops).
 * @param {string} file @param {string[]} args @param {number} timeoutMs @param {Record<string, string>} env
 * @param {AbortSignal} [signal]
 * @returns {Promise<{ code: number, output: string, timedOut: boolean }>}
 */
export function run(file, args, timeoutMs, env, signal) {
  return new Promise((resolve) => {
    // detached: a session and process group of its own, which the kill below reaches whole.
    const child = spawn(file, args, { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const stdout = capture(child.stdout);
    const stderr = capture(child.stderr);
    let exited = false;
    let timedOut = false;
    /** @type {Error | undefined} */
    let failure;
    const killGroup = (/** @type {boolean} */ onTime) => {
      if (!exited && onTime) timedOut = true;
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // ESRCH: the group has ended already.
      }
      // A process that left the group (setsid) and kept the output open must not hold the answer.
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const timer = setTimeout(() => killGroup(true), timeoutMs);
    const stop = () => killGroup(false);
    signal?.addEventListener("abort", stop, { once: true });
    if (signal?.aborted) stop();
    child.on("exit", () => (exited = true));
    child.on("error", (error) => (failure = error));
    child.on("close", (code) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", stop);
      const output = `${stderr()}${stdout()}`.trim();
      if (code === 0 && !failure) return resolve({ code: 0, output, timedOut: false });
      const exit = typeof code === "number" && code > 0 && !failure ? code : -1;
      const why = failure?.message ?? `Command failed: ${[file, ...args].join(" ")}`;
      resolve({ code: exit, output: output || why, timedOut });
    });
  });
}

/** haproxy's output without its NOTICE lines (version banners), at most MAX_OUTPUT characters from the end. */
export const tail = (/** @type {string} */ text) => {
  const useful = text
    .split("\n")
    .filter((line) => !line.startsWith("[NOTICE]"))
    .join("\n")
    .trim();
  return useful.length > MAX_OUTPUT ? `...${useful.slice(-MAX_OUTPUT)}` : useful;
};
