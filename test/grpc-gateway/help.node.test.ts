// `--help` of the gateway and the command-line client (plain Node): exit 0 without starting anything; the gateway's
// list names every variable settings.mjs reads, each with the default it applies when the variable is unset.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GatewaySettingsSchema, parseDurationMs } from "../../grpc-gateway/settings.mjs";

const programs = path.join(import.meta.dirname, "..", "..", "grpc-gateway");

function run(program: string, args: string[]) {
  // No environment beyond PATH: --help must need none.
  const result = spawnSync(process.execPath, [path.join(programs, program), ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH },
    timeout: 30_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("grpc-gateway/gateway.mjs --help", () => {
  const help = run("gateway.mjs", ["--help"]);
  const fields = Object.entries(GatewaySettingsSchema.in.shape);
  /** Variable name to the text in parentheses after it, e.g. "duration, default 2s". */
  const listed = new Map(
    [...help.stdout.matchAll(/^ {2}([A-Z][A-Z0-9_]+)(?: \((.*)\))?$/gm)].map((match) => [match[1], match[2] ?? ""]),
  );

  it("prints the usage and exits 0; -h is the same", () => {
    expect(help.status).toBe(0);
    expect(help.stderr).toBe("");
    expect(help.stdout).toMatch(/^usage: npm run grpc-gateway /);
    expect(run("gateway.mjs", ["-h"])).toEqual(help);
  });

  it("lists every variable the settings read, in their order, and no other", () => {
    expect(fields.length).toBe(35);
    expect([...listed.keys()]).toEqual(fields.map(([name]) => name));
  });

  it("states the default of every variable that has one, as the settings apply it", () => {
    for (const [name, field] of fields) {
      const unset = field.safeParse(undefined).data;
      const stated = /(?:^|, )default (.+)$/.exec(listed.get(name) ?? "")?.[1];
      const applied =
        stated === undefined
          ? undefined
          : typeof unset === "number"
            ? /^\d+(\.\d+)?$/.test(stated)
              ? Number(stated)
              : parseDurationMs(stated)
            : typeof unset === "boolean"
              ? stated === "true"
              : stated;
      const hasDefault = unset !== undefined && unset !== "" && !(Array.isArray(unset) && unset.length === 0);
      expect({ name, default: applied }).toEqual({ name, default: hasDefault ? unset : undefined });
    }
  });

  it("refuses any other argument with exit 2, naming it", () => {
    const refused = run("gateway.mjs", ["--port", "9000"]);
    expect(refused.status).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toBe(
      `grpc-gateway: unexpected argument --port (settings are environment variables)\n${help.stdout}`,
    );
  });
});

describe("grpc-gateway/client.mjs --help", () => {
  it("prints the usage and exits 0; -h and -help are the same", () => {
    const help = run("client.mjs", ["--help"]);
    expect(help.status).toBe(0);
    expect(help.stderr).toBe("");
    expect(help.stdout).toMatch(/^Usage: npm run client -- \[flags\]\n/);
    expect(run("client.mjs", ["-h"])).toEqual(help);
    expect(run("client.mjs", ["-help"])).toEqual(help);
  });

  it("says it reads no environment variable, and neither it nor its modules do", () => {
    expect(run("client.mjs", ["--help"]).stdout).toContain("Environment: none of its own (flags only)");
    for (const module of ["client.mjs", "proto.mjs", "settings.mjs"]) {
      const reads = readFileSync(path.join(programs, module), "utf8").includes("process.env");
      expect({ module, reads }).toEqual({ module, reads: false });
    }
  });
});
