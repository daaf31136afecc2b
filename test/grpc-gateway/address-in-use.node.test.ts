// The gateway started on an address another process holds: it exits 1 with one error line that names the address
// and the settings that choose another (GRPC_PORT, GRPC_HOST, GRPC_UDS), instead of grpc-js's bare bind error; a
// unix socket file nothing listens on any more is replaced.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runGatewayAlone } from "../support/grpc-gateway";

const gateway = path.join(import.meta.dirname, "..", "..", "grpc-gateway", "gateway.mjs");
const dir = mkdtempSync(path.join(tmpdir(), "gateway-in-use-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (env: Record<string, string>) => runGatewayAlone(env);

/** The error lines the gateway logged (grpc-js's own diagnostics, which are not JSON, left out). */
const errors = (stderr: string) =>
  stderr
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => {
      const { "@timestamp": _, ...entry } = JSON.parse(line);
      return entry;
    });

describe("grpc-gateway on an address in use", () => {
  it("names the address and GRPC_PORT, GRPC_HOST and GRPC_UDS, and exits 1", async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      const result = await run({ GRPC_HOST: "127.0.0.1", GRPC_PORT: String(port) });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(errors(result.stderr)).toEqual([
        {
          level: "error",
          "@message": "grpc-gateway: cannot start",
          error:
            `127.0.0.1:${port} is already in use; set GRPC_PORT to another port (or GRPC_HOST to another address, ` +
            "or GRPC_UDS to a unix socket path)",
        },
      ]);
    } finally {
      holder.close();
    }
  });

  it("names GRPC_UDS when its path is a file that is not a socket, and leaves the file", async () => {
    const file = path.join(dir, "not-a-socket");
    writeFileSync(file, "kept");
    const result = await run({ GRPC_UDS: file });
    expect(result.code).toBe(1);
    expect(errors(result.stderr)).toEqual([
      {
        level: "error",
        "@message": "grpc-gateway: cannot start",
        error: `${file} is in use by something that is not a socket; set GRPC_UDS to another path`,
      },
    ]);
    expect(readFileSync(file, "utf8")).toBe("kept");
  });

  it("names GRPC_UDS when a process still listens on its socket, and leaves that process reachable", async () => {
    const socketPath = path.join(dir, "live.sock");
    // The gateway's probe hangs up at once: its reset is no error of the holder's.
    const holder: Server = createServer((socket) => socket.on("error", () => {}).end("held"));
    await new Promise<void>((resolve) => holder.listen(socketPath, resolve));
    try {
      const result = await run({ GRPC_UDS: socketPath });
      expect(result.code).toBe(1);
      expect(errors(result.stderr)).toEqual([
        {
          level: "error",
          "@message": "grpc-gateway: cannot start",
          error: `${socketPath} is in use by a process listening on it; set GRPC_UDS to another path`,
        },
      ]);
      const answer = await new Promise<string>((resolve, reject) => {
        let text = "";
        connect(socketPath)
          .on("data", (chunk) => (text += chunk))
          .on("end", () => resolve(text))
          .on("error", reject);
      });
      expect(answer).toBe("held");
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("replaces a socket file nothing listens on, and serves there", async () => {
    const socketPath = path.join(dir, "stale.sock");
    // A process killed while listening leaves its socket file behind.
    const killed = spawn(process.execPath, [
      "-e",
      `require("node:net").createServer().listen(${JSON.stringify(socketPath)}, () => process.kill(process.pid, "SIGKILL"))`,
    ]);
    await new Promise((resolve) => killed.on("close", resolve));
    expect(existsSync(socketPath)).toBe(true);
    const child = spawn(process.execPath, [gateway], { env: { PATH: process.env.PATH, GRPC_UDS: socketPath } });
    const guard = setTimeout(() => child.kill("SIGKILL"), 4000);
    let stdout = "";
    await new Promise<void>((resolve) =>
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
        if (stdout.includes("grpc-gateway: serving")) resolve();
      }),
    );
    child.kill("SIGTERM");
    expect(await new Promise((resolve) => child.on("close", resolve))).toBe(0);
    clearTimeout(guard);
    expect(JSON.parse(stdout.split("\n")[0])).toMatchObject({
      "@message": "grpc-gateway: serving",
      address: `unix:${socketPath}`,
    });
  });
});
