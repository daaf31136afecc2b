// LOG_LEVEL and LOG_FORMAT for every service: logrus-style text by default, JSON objects with @message, @timestamp
// and level, level filtering, and malformed values named once without breaking anything.
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { configureLogging, logDebug, logEnabled, logError, logInfo, logWarn } from "../../src/shared/log";

const NOW = Date.UTC(2030, 0, 1, 0, 0, 30);
beforeAll(() => vi.useFakeTimers({ toFake: ["Date"], now: NOW }));
afterAll(() => {
  vi.useRealTimers();
  configureLogging(env);
});
afterEach(() => vi.restoreAllMocks());

function capture() {
  const lines: [string, string][] = [];
  for (const method of ["log", "warn", "error"] as const) {
    vi.spyOn(console, method).mockImplementation((line: unknown) => void lines.push([method, String(line)]));
  }
  return lines;
}

describe("log format", () => {
  it("writes logrus-style text by default: time, level, msg, then the fields sorted and quoted when needed", () => {
    configureLogging({});
    const lines = capture();
    logInfo("ratelimit: configuration loaded", { version: 3, source: "runtime", domains: ["a", "b"] });
    logWarn("plain", { path: "/v1/x" });
    expect(lines).toEqual([
      [
        "log",
        'time="2030-01-01T00:00:30.000Z" level=info msg="ratelimit: configuration loaded" domains="[\\"a\\",\\"b\\"]" source=runtime version=3',
      ],
      ["warn", 'time="2030-01-01T00:00:30.000Z" level=warning msg=plain path=/v1/x'],
    ]);
  });

  it("writes JSON objects with @message, @timestamp and level when LOG_FORMAT=json", () => {
    configureLogging({ LOG_FORMAT: "JSON" });
    const lines = capture();
    logError("boom", new TypeError("bad thing"));
    logInfo("hello", { n: 1 });
    expect(lines.map(([method]) => method)).toEqual(["error", "log"]);
    expect(JSON.parse(lines[0][1])).toEqual({
      "@timestamp": "2030-01-01T00:00:30.000Z",
      level: "error",
      "@message": "boom",
      error: { name: "TypeError", message: "bad thing", stack: expect.any(String) },
    });
    expect(JSON.parse(lines[1][1])).toEqual({
      "@timestamp": "2030-01-01T00:00:30.000Z",
      level: "info",
      "@message": "hello",
      n: 1,
    });
  });
});

describe("logged errors", () => {
  it("carry the name and message of each cause, as D1's error under drizzle's", () => {
    configureLogging({ LOG_FORMAT: "json" });
    const lines = capture();
    const d1 = new Error("D1_ERROR: no such table: x: SQLITE_ERROR", { cause: new Error("SQLITE_ERROR") });
    logError("proxy: unexpected error", new Error('Failed query: select * from "x"\nparams: ', { cause: d1 }));
    logError("odd", new Error("wraps a string", { cause: "just text" }));
    expect(JSON.parse(lines[0][1]).error).toEqual({
      name: "Error",
      message: 'Failed query: select * from "x"\nparams: ',
      stack: expect.any(String),
      cause: {
        name: "Error",
        message: "D1_ERROR: no such table: x: SQLITE_ERROR",
        cause: { name: "Error", message: "SQLITE_ERROR" },
      },
    });
    expect(JSON.parse(lines[1][1]).error).toMatchObject({ message: "wraps a string", cause: { message: "just text" } });
  });

  it("stop at four causes, so that a cycle ends", () => {
    configureLogging({ LOG_FORMAT: "json" });
    const lines = capture();
    const looped = new Error("loop");
    looped.cause = looped;
    logError("cycle", looped);
    let depth = 0;
    for (let at = JSON.parse(lines[0][1]).error; at.cause; at = at.cause) depth += 1;
    expect(depth).toBe(4);
  });
});

describe("log level", () => {
  it("drops lines below LOG_LEVEL (info by default; warn and warning alike)", () => {
    configureLogging({ LOG_FORMAT: "json", LOG_LEVEL: "Warning" });
    const lines = capture();
    logDebug("d");
    logInfo("i");
    logWarn("w");
    logError("e", undefined);
    expect(lines.map(([, line]) => JSON.parse(line)["@message"])).toEqual(["w", "e"]);
    expect(logEnabled("info")).toBe(false);

    configureLogging({ LOG_FORMAT: "json", LOG_LEVEL: "debug" });
    logDebug("visible");
    expect(JSON.parse(lines.at(-1)![1])).toMatchObject({ level: "debug", "@message": "visible" });

    configureLogging({ LOG_FORMAT: "json" });
    expect([logEnabled("info"), logEnabled("debug")]).toEqual([true, false]);
  });

  it("names a malformed LOG_LEVEL or LOG_FORMAT once and keeps the defaults", () => {
    const lines = capture();
    const bad = { LOG_LEVEL: "loud", LOG_FORMAT: "xml" };
    configureLogging(bad);
    configureLogging({});
    configureLogging(bad);
    expect(lines).toEqual([
      [
        "error",
        'time="2030-01-01T00:00:30.000Z" level=error msg="log settings are invalid, using the default: LOG_LEVEL: expected panic, fatal, error, warn, info, debug or trace"',
      ],
      [
        "error",
        'time="2030-01-01T00:00:30.000Z" level=error msg="log settings are invalid, using the default: LOG_FORMAT: expected text or json"',
      ],
    ]);
    expect(logEnabled("info")).toBe(true);
  });

  it("applies to every service through the Worker's entry", async () => {
    /** POST /json for one descriptor of `domain`, under these bindings. */
    const postJson = (domain: string, bindings: Env) =>
      worker.fetch(
        new Request("http://example.com/json", {
          method: "POST",
          body: `{"domain":"${domain}","descriptors":[{"entries":[{"key":"k","value":"v"}]}]}`,
        }),
        bindings,
      );
    const lines = capture();
    const quiet = { ...env, LOG_LEVEL: "error" } as Env;
    // The proxy API's unknown route answers without logging; a news error would log at error level. Here the
    // rate limit service's configuration load logs at info level, which LOG_LEVEL=error silences.
    await postJson("quiet", quiet);
    expect(lines.filter(([, line]) => line.includes("configuration loaded"))).toEqual([]);
    const loud = { ...env, LOG_LEVEL: "info" } as Env;
    await postJson("loud", loud);
    expect(
      lines.filter(([, line]) => line.includes("configuration loaded")).map(([, line]) => JSON.parse(line).level),
    ).toEqual(["info"]);
  });
});
