// The gateway started on an address another process holds: it exits 1 with one error line that names the address
// and the settings that choose another (GRPC_PORT, GRPC_HOST, GRPC_UDS), instead of grpc-js's bare bind error.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const gateway = path.join(import.meta.dirname, "..", "..", "grpc-gateway", "gateway.mjs");
const dir = mkdtempSync(path.join(tmpdir(), "gateway-in-use-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the gateway with only these variables (and PATH) until it exits. */
function run(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [gateway], { env: { PATH: process.env.PATH, ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

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
});
