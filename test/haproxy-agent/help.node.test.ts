// `--help` of the HAProxy agent (plain Node): exit 0 without a token and without listening, every flag and every
// environment variable the agent reads listed.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const agentDir = path.join(import.meta.dirname, "..", "..", "haproxy-agent");

function run(args: string[]) {
  // No HAPROXY_AGENT_TOKEN: --help must not need it.
  const result = spawnSync(process.execPath, [path.join(agentDir, "agent.mjs"), ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH },
    timeout: 30_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("haproxy-agent/agent.mjs --help", () => {
  const help = run(["--help"]);

  it("prints the usage and exits 0; -h is the same", () => {
    expect(help.status).toBe(0);
    expect(help.stderr).toBe("");
    expect(help.stdout).toMatch(/^usage: npm run haproxy-agent -- --config-dir DIR --reload-cmd CMD \[options\]\n/);
    expect(run(["-h"])).toEqual(help);
  });

  it("lists every flag", () => {
    const flags = [
      "--config-dir",
      "--reload-cmd",
      "--host",
      "--port",
      "--haproxy",
      "--timeout",
      "--max-body",
      "--request-timeout",
      "--tls-cert",
      "--tls-key",
      "--help",
    ];
    expect(flags.filter((flag) => !help.stdout.includes(`${flag} `))).toEqual([]);
  });

  it("lists every environment variable: the token, and PATH (the only one haproxy and the reload get)", () => {
    // Every module of the agent, so that one added later is read too.
    const sources = readdirSync(agentDir)
      .filter((file) => file.endsWith(".mjs"))
      .map((file) => readFileSync(path.join(agentDir, file), "utf8"))
      .join();
    const read = new Set([...sources.matchAll(/process\.env\.([A-Z_]+)/g)].map((match) => match[1]));
    expect([...read]).toEqual(["HAPROXY_AGENT_TOKEN"]);
    expect(help.stdout).toMatch(/^ {2}HAPROXY_AGENT_TOKEN {2}\(required\) /m);
    expect(help.stdout).toMatch(/^ {2}PATH {17}where haproxy and CMD are found /m);
  });
});
