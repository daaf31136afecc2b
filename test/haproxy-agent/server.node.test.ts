// The agent's HTTP server, started as an operator runs it and asked over real HTTP: what it answers to requests it
// refuses before they reach a push (a bundle too large or of too many files, a push id that is no id, a request that
// takes too long to arrive), and to a push's outcome asked while its commit is under way.
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bundleDigest, parseBundle } from "../../haproxy-agent/apply.mjs";
import { MAX_FILES } from "../../haproxy-agent/bundle.mjs";
import { authorization, startAgent, stopAgents, until } from "./agent-process";
import { scratchDirs } from "./scratch-dirs";

const tempDir = scratchDirs("agent-server-");
// Registered after the directories' removal, so run before it: no agent is left writing into a removed directory.
afterEach(stopAgents);

describe("haproxy-agent: the HTTP server", () => {
  it("answers a request target that is no URL with 400 before any token, and goes on serving", async () => {
    const agent = await startAgent(tempDir(), {});
    for (const target of ["//[/v1/status", "http://[", "//a:b:c/v1/status"]) {
      const socket = connect(agent.port, "127.0.0.1");
      socket.write(`GET ${target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`);
      let answer = "";
      for await (const chunk of socket) answer += String(chunk);
      expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request");
      expect(answer.endsWith('{"error":"the request target is not a path"}')).toBe(true);
    }
    const status = await fetch(`${agent.url}/healthz`);
    expect(status.status).toBe(200);
    expect(agent.child.exitCode).toBeNull();
  });

  it("answers a bundle over --max-body with 413 and why, just over or far over, and goes on answering", async () => {
    const configDir = tempDir();
    const agent = await startAgent(configDir, { args: ["--max-body", "1"] });
    for (const megabytes of [1.5, 16]) {
      const response = await fetch(`${agent.url}/v1/config`, {
        method: "PUT",
        headers: { ...authorization, "Content-Type": "application/json" },
        body: "x".repeat(megabytes * 1024 * 1024),
      });
      expect({ status: response.status, body: await response.json() }).toEqual({
        status: 413,
        body: { error: "the bundle is larger than 1 MB" },
      });
    }
    expect(readdirSync(configDir)).toEqual([]);
    expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
  });

  it("answers a push id whose percent-escape is malformed with 400, not an unexpected error", async () => {
    const agent = await startAgent(tempDir(), {});
    for (const [method, pathName] of [
      ["GET", "/v1/pushes/%ZZ"],
      ["POST", "/v1/pushes/p-%E0%A4%A/abandon"],
    ]) {
      const response = await fetch(`${agent.url}${pathName}`, { method, headers: authorization });
      expect({ status: response.status, body: await response.json() }).toEqual({
        status: 400,
        body: { error: "the push id must be 1 to 100 letters, digits, dots, dashes or underscores" },
      });
    }
    // An id escaped as it may be is still read: %2D is a dash.
    const known = await fetch(`${agent.url}/v1/pushes/p%2D1`, { headers: authorization });
    expect({ status: known.status, body: await known.json() }).toEqual({
      status: 404,
      body: { error: "unknown push id" },
    });
    expect(agent.output()).not.toContain("unexpected error");
  });
});

describe("haproxy-agent: a push's outcome asked during its commit", () => {
  it("answers the abandon, the outcome and the status once the commit has ended: applied, never reloading", async () => {
    const configDir = tempDir();
    const tools = tempDir();
    const agent = await startAgent(configDir, {
      node: ["--import", path.join(import.meta.dirname, "hold-commit.mjs")],
      env: { HOLD_COMMIT_DIR: tools },
    });
    const files = { "haproxy.cfg": "global\n# held\n" };
    const digest = bundleDigest(files);
    const ask = async (method: string, pathName: string) => {
      const response = await fetch(`${agent.url}${pathName}`, { method, headers: authorization });
      return { status: response.status, body: await response.json() };
    };
    const push = fetch(`${agent.url}/v1/config`, {
      method: "PUT",
      headers: { ...authorization, "Content-Type": "application/json" },
      body: JSON.stringify({ version: 1, digest, files, pushId: "p-held" }),
    });
    // The reload has ended and the commit holds at the rename of the state record: the push is still reloading.
    await until(() => existsSync(path.join(tools, "commit-started")));
    const answered: string[] = [];
    const asked = (name: string, method: string, pathName: string) =>
      ask(method, pathName).finally(() => answered.push(name));
    const abandon = asked("abandon", "POST", "/v1/pushes/p-held/abandon");
    const outcome = asked("outcome", "GET", "/v1/pushes/p-held");
    const status = asked("status", "GET", "/v1/status");
    // A test that fails early kills the agent: these then fail too, which is no further error.
    for (const pending of [push, abandon, outcome, status]) pending.catch(() => {});
    // Each waits for the commit: none answers while it holds (without the wait, reloading and version null at once).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(answered).toEqual([]);
    writeFileSync(path.join(tools, "commit-go"), "");

    const applied = { pushId: "p-held", version: 1, state: "applied", error: null, at: expect.any(String) };
    expect(await abandon).toEqual({ status: 200, body: applied });
    expect(await outcome).toEqual({ status: 200, body: applied });
    expect(await status).toEqual({
      status: 200,
      body: { version: 1, digest, appliedAt: expect.any(String), diskDigest: digest, lastError: null },
    });
    const response = await push;
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 200,
      body: { outcome: "applied", version: 1 },
    });
    // The abandon changed nothing: the push stays applied.
    expect(await ask("GET", "/v1/pushes/p-held")).toEqual({ status: 200, body: applied });
    const messages = agent
      .output()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line)["@message"]);
    expect(messages).toEqual(["haproxy-agent: listening", "haproxy-agent: applied"]);
  });
});

/** A bundle's files: haproxy.cfg and `certificates` certificates. */
function manyFiles(certificates: number) {
  const files: Record<string, string> = { "haproxy.cfg": "global\n" };
  for (let index = 0; index < certificates; index++) files[`certs/c${index}.pem`] = "";
  return files;
}

/** Sends `head` and then a byte every 100 ms on a raw connection; resolves with all it read once it closes. */
function trickle(port: number, head: string) {
  return new Promise<string>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let read = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (read += chunk));
    socket.on("error", () => {});
    socket.write(head);
    const timer = setInterval(() => socket.writable && socket.write("x"), 100);
    socket.on("close", () => {
      clearInterval(timer);
      resolve(read);
    });
  });
}

describe("haproxy-agent: bounds", () => {
  it(`takes a bundle of ${MAX_FILES} files and answers 413 to one more, pushed or checked`, async () => {
    const most = manyFiles(MAX_FILES - 1);
    expect(Object.keys(parseBundle({ version: 1, digest: bundleDigest(most), files: most }).files)).toHaveLength(
      MAX_FILES,
    );
    const agent = await startAgent(tempDir(), {});
    const files = manyFiles(MAX_FILES);
    const error = `files: the bundle holds ${MAX_FILES + 1} files, more than ${MAX_FILES}`;
    for (const [method, pathName] of [
      ["PUT", "/v1/config"],
      ["POST", "/v1/check"],
    ]) {
      const response = await fetch(`${agent.url}${pathName}`, {
        method,
        headers: { ...authorization, "Content-Type": "application/json" },
        body: JSON.stringify({ version: 1, digest: bundleDigest(files), files }),
      });
      expect({ status: response.status, body: await response.json() }).toEqual({ status: 413, body: { error } });
    }
  });

  it("answers 408 and closes a request whose body does not arrive within --request-timeout", async () => {
    const agent = await startAgent(tempDir(), { args: ["--request-timeout", "1"] });
    const head = `PUT /v1/config HTTP/1.1\r\nHost: agent\r\nAuthorization: ${authorization.Authorization}\r\n`;
    expect(await trickle(agent.port, `${head}Content-Length: 1000000\r\n\r\n{"version":`)).toBe(
      "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n",
    );
  });

  it("does not count the time a push's check and reload take against --request-timeout", async () => {
    const agent = await startAgent(tempDir(), { args: ["--request-timeout", "1"], reloadCmd: "sleep 1.5" });
    const files = manyFiles(0);
    const response = await fetch(`${agent.url}/v1/config`, {
      method: "PUT",
      headers: { ...authorization, "Content-Type": "application/json" },
      body: JSON.stringify({ version: 1, digest: bundleDigest(files), files }),
    });
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 200,
      body: { outcome: "applied", version: 1 },
    });
  });
});
