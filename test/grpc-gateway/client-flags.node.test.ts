// The command-line client's -grpc-use-tls flag, run as a process: it reads the spellings Go's flag package reads
// (t and f among them, in any case) and refuses anything else before it dials.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const client = path.join(import.meta.dirname, "..", "..", "grpc-gateway", "client.mjs");

/** Runs the client against a port nothing listens on: it fails either at its flags or at the call. */
const run = (tls: string) =>
  spawnSync(process.execPath, [client, `-grpc-use-tls=${tls}`, "-dial_string", "127.0.0.1:1", "-timeout", "2s"], {
    encoding: "utf8",
    timeout: 20_000,
  });

/** Eight processes one after another: about 0.6 s each on a busy 2-core machine, past vitest's 5 s default. */
const EIGHT_RUNS_MS = 30_000;

describe("npm run client -- -grpc-use-tls", () => {
  it("takes true, 1, t, false, 0 and f in any case, and dials", { timeout: EIGHT_RUNS_MS }, () => {
    for (const spelling of ["t", "T", "f", "F", "true", "FALSE", "1", "0"]) {
      const result = run(spelling);
      expect(result.status, spelling).toBe(1);
      expect(result.stderr, spelling).toMatch(/^request error: rpc error: code = Unavailable desc = /);
    }
  });

  it("refuses any other spelling before dialling", () => {
    const result = run("yes");
    expect(result.status).toBe(1);
    expect(result.stderr.split("\n")[0]).toBe('invalid boolean value "yes" for -grpc-use-tls');
  });
});
