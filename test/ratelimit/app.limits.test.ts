// The rate limit service's input limits, one test per attack of the pentest (issue 16) through the real Worker: each is
// refused with its exact status and message, touches no counter and stores nothing, and the config in force keeps
// serving.
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { RateLimitRequestSchema } from "../../src/ratelimit/gen/envoy/service/ratelimit/v3/rls_pb";
import { rateLimitSettings } from "../../src/ratelimit/settings";
import { call, callJson } from "../support/worker-http";
import {
  connectErrorOf,
  descriptor,
  installConfig,
  putConfig,
  RATELIMIT_ADMIN,
  rateLimit,
} from "../support/ratelimit-calls";
import { callWithEnv, clients, postJson, recordingCounters } from "../support/ratelimit-wires";

const CONFIG =
  "domain: limits\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: hour\n      requests_per_unit: 5\n";
const PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const MiB = 1024 * 1024;

const REQUEST_BYTES = "request body is larger than 1048576 bytes (the limit set by RATELIMIT_MAX_REQUEST_BYTES)";
const CONFIG_BYTES = "request body is larger than 4194304 bytes (the limit set by RATELIMIT_CONFIG_MAX_BODY_BYTES)";
const TOO_DEEP = "is nested deeper than 100 levels (the limit set by RATELIMIT_MAX_NESTING_DEPTH)";
const TOO_MANY_DESCRIPTORS =
  "the request has 10000 descriptors, more than 64 (the limit set by RATELIMIT_MAX_DESCRIPTORS)";
const TOO_MANY_ENTRIES =
  "descriptor 1 has 33 entries, more than 32 (the limit set by RATELIMIT_MAX_DESCRIPTOR_ENTRIES)";

/** The pentest's 439-byte alias bomb: nine aliases of nine aliases of ... one descriptor. */
const BOMB = [
  "# expanded: 9^9 = 387,420,489 copies of the descriptor &a.",
  "domain: bomb",
  "descriptors:",
  "  - &a {key: lol, value: lol}",
  ..."bcdefghij".split("").map((name, i) => `  - &${name} [${Array(9).fill(`*${"abcdefghij"[i]}`).join(",")}]`),
  "",
].join("\n");

const storedFiles = async () =>
  (await env.DB.prepare("SELECT name, content FROM ratelimit_config_files ORDER BY name").all()).results;
const storedVersion = async () => (await env.DB.prepare("SELECT version FROM ratelimit_config_state").first())?.version;

/** The version of the set installed before each test. */
let installedVersion: unknown;

/** The config in force still answers (the rule of CONFIG applies), and D1 holds the same set at the same version. */
async function configStillServes() {
  const answer = await rateLimit({ domain: "limits", descriptors: [descriptor(["k", crypto.randomUUID()])] });
  expect(answer.status).toBe(200);
  expect(answer.body.statuses[0].currentLimit).toEqual({ requestsPerUnit: 5, unit: "HOUR" });
  expect(await storedFiles()).toEqual([{ name: "limits.yaml", content: CONFIG }]);
  expect(await storedVersion()).toBe(installedVersion);
}

const manyDescriptors = (count: number) => Array.from({ length: count }, (_, i) => descriptor(["k", `v${i}`]));

beforeEach(async () => {
  await installConfig({ "limits.yaml": CONFIG });
  installedVersion = await storedVersion();
});

describe("the settings", () => {
  it("default to the documented limits", () => {
    expect(rateLimitSettings({})).toMatchObject({
      RATELIMIT_MAX_REQUEST_BYTES: MiB,
      RATELIMIT_MAX_DESCRIPTORS: 64,
      RATELIMIT_MAX_DESCRIPTOR_ENTRIES: 32,
      RATELIMIT_MAX_VALUE_BYTES: 64 * 1024,
      RATELIMIT_MAX_NESTING_DEPTH: 100,
      RATELIMIT_CONFIG_MAX_BODY_BYTES: 4 * MiB,
      RATELIMIT_CONFIG_MAX_FILES: 100,
      RATELIMIT_CONFIG_MAX_FILE_BYTES: 512 * 1024,
      RATELIMIT_CONFIG_MAX_ALIAS_NODES: 10_000,
    });
  });
});

describe("PUT /rlconfig/files", () => {
  it("refuses the 439-byte alias bomb with 400 naming the limit, and the previous config keeps serving", async () => {
    expect(new TextEncoder().encode(BOMB).length).toBe(439);
    const response = await putConfig({ "bomb.yaml": BOMB });
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(
      "bomb.yaml: aliases expand to more than 10000 nodes in this set of files " +
        "(the limit set by RATELIMIT_CONFIG_MAX_ALIAS_NODES)",
    );
    await configStillServes();
  });

  it("counts the alias budget across the files of a set", async () => {
    // Each alias of the five-node rate_limit adds five nodes: 10 and 15 fit a budget of 20 alone, 25 do not.
    const file = (domain: string, aliases: number) =>
      `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit: &r {unit: hour, requests_per_unit: 1}\n` +
      Array.from({ length: aliases }, (_, i) => `  - key: k${i}\n    rate_limit: *r\n`).join("");
    const [small, larger] = [file("a", 2), file("b", 3)];
    const vars = { RATELIMIT_CONFIG_MAX_ALIAS_NODES: "20" };
    const put = (files: Record<string, string>) =>
      callWithEnv(vars, "/rlconfig/files", {
        method: "PUT",
        headers: RATELIMIT_ADMIN,
        body: JSON.stringify({ files }),
      });
    expect((await put({ "a.yaml": small })).status).toBe(200);
    expect((await put({ "b.yaml": larger })).status).toBe(200);
    const both = await put({ "a.yaml": small, "b.yaml": larger });
    expect(both.status).toBe(400);
    expect(await both.text()).toBe(
      "b.yaml: aliases expand to more than 20 nodes in this set of files " +
        "(the limit set by RATELIMIT_CONFIG_MAX_ALIAS_NODES)",
    );
  });

  it("refuses a body over 4 MiB with 413 before reading it, storing nothing", async () => {
    const body = { files: { "big.yaml": "#".repeat(4 * MiB) } };
    const response = await callJson("/rlconfig/files", "PUT", body, RATELIMIT_ADMIN);
    expect(response.status).toBe(413);
    expect(response.headers.get("content-type")).toBe("text/plain; charset=UTF-8");
    expect(await response.text()).toBe(CONFIG_BYTES);
    await configStillServes();
  });

  it("refuses a streamed body once it passes the limit", async () => {
    const chunk = new TextEncoder().encode(`{"files":{"a.yaml":"${"#".repeat(1000)}`);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(chunk);
        controller.enqueue(chunk);
        controller.close();
      },
    });
    const response = await callWithEnv({ RATELIMIT_CONFIG_MAX_BODY_BYTES: "1500" }, "/rlconfig/files", {
      method: "PUT",
      headers: RATELIMIT_ADMIN,
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.text()).toBe(
      "request body is larger than 1500 bytes (the limit set by RATELIMIT_CONFIG_MAX_BODY_BYTES)",
    );
    await configStillServes();
  });

  it("refuses a 10,000-deep xDS config with 400 naming the depth limit", async () => {
    const depth = 10_000;
    const nested = '{"key":"k","descriptors":['.repeat(depth) + '{"key":"k"}' + "]}".repeat(depth);
    const body = `{"configs":[{"name":"deep","domain":"deep","descriptors":[${nested}]}]}`;
    const response = await callJson("/rlconfig/files", "PUT", body, RATELIMIT_ADMIN);
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(`request body ${TOO_DEEP}`);
    await configStillServes();
  });

  it.each([
    ["flow", `domain: deep\ndescriptors: ${"[".repeat(10_000)}${"]".repeat(10_000)}\n`],
    [
      "block",
      "domain: deep\ndescriptors:\n" +
        Array.from({ length: 60 }, (_, level) => {
          const indent = "    ".repeat(level);
          return `${indent}  - key: k${level}\n${indent}    descriptors:\n`;
        }).join(""),
    ],
  ])("refuses deep %s YAML with 400 and our message, not the parser's", async (_form, text) => {
    const response = await putConfig({ "deep.yaml": text });
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(`deep.yaml: the YAML ${TOO_DEEP}`);
    await configStillServes();
  });

  it("loads a config as deep as the longest request descriptor allowed, which then matches", async () => {
    const levels = 32;
    const text =
      "domain: deepest\ndescriptors:\n" +
      Array.from({ length: levels }, (_, level) => {
        const indent = "    ".repeat(level);
        const last = level === levels - 1;
        const rule = `rate_limit:\n${indent}      unit: day\n${indent}      requests_per_unit: 7\n`;
        const tail = last ? rule : "descriptors:\n";
        return `${indent}  - key: k${level}\n${indent}    ${tail}`;
      }).join("");
    expect((await putConfig({ "deepest.yaml": text })).status).toBe(200);
    const entries = Array.from({ length: levels }, (_, level) => [`k${level}`, "x"] as [string, string]);
    const answer = await rateLimit({ domain: "deepest", descriptors: [descriptor(...entries)] });
    expect(answer.body.statuses[0].currentLimit).toEqual({ requestsPerUnit: 7, unit: "DAY" });
  });

  it("refuses a file over RATELIMIT_CONFIG_MAX_FILE_BYTES before parsing it", async () => {
    const response = await putConfig({ "a.yaml": CONFIG, "big.yaml": `domain: big\n#${"x".repeat(512 * 1024)}\n` });
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(
      "big.yaml: the file is larger than 524288 bytes (the limit set by RATELIMIT_CONFIG_MAX_FILE_BYTES)",
    );
    await configStillServes();
  });

  it("refuses more files than RATELIMIT_CONFIG_MAX_FILES, in either form", async () => {
    const files = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}.yaml`, `domain: d${i}\n`]));
    const response = await putConfig(files);
    expect(response.status).toBe(400);
    const error = "the set has 101 files, more than 100 (the limit set by RATELIMIT_CONFIG_MAX_FILES)";
    expect(await response.text()).toBe(error);
    const configs = Array.from({ length: 101 }, (_, i) => ({ name: `c${i}`, domain: `d${i}` }));
    const xds = await callJson("/rlconfig/files", "PUT", { configs }, RATELIMIT_ADMIN);
    expect(xds.status).toBe(400);
    expect(await xds.text()).toBe(error);
    await configStillServes();
  });

  it("refuses a file name longer than 255 characters", async () => {
    const name = `${"n".repeat(300)}.yaml`;
    const response = await putConfig({ [name]: "domain: long\n" });
    expect(response.status).toBe(400);
    const error = `${"n".repeat(32)}...: a file name is at most 255 characters long`;
    expect(await response.text()).toBe(error);
    await configStillServes();
  });

  it("refuses a body that is not UTF-8 with 400", async () => {
    const start = new TextEncoder().encode('{"files":{"a.yaml":"domain: x');
    const bytes = new Uint8Array([...start, 0xff, ...new TextEncoder().encode('"}}')]);
    const response = await call("/rlconfig/files", { method: "PUT", headers: RATELIMIT_ADMIN, body: bytes });
    expect(response.status).toBe(400);
    expect(await response.text()).toBe("request body is not valid UTF-8");
    await configStillServes();
  });
});

describe("POST /json", () => {
  /** POSTs `body` with the counters recorded: refused with `status` and the plain-text `message`, none touched. */
  async function expectRefusedBeforeCounting(body: string, status: number, message: string) {
    const counters = recordingCounters();
    const response = await postJson({ RATE_LIMIT_COUNTER: counters.binding }, body);
    expect(response.status).toBe(status);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await response.text()).toBe(message);
    expect(counters.objects).toEqual([]);
  }

  it("refuses 10,000 descriptors with 400 before any counter is touched", async () => {
    const body = JSON.stringify({ domain: "limits", descriptors: manyDescriptors(10_000) });
    await expectRefusedBeforeCounting(body, 400, TOO_MANY_DESCRIPTORS);
  });

  it("takes exactly RATELIMIT_MAX_DESCRIPTORS descriptors, and RATELIMIT_MAX_DESCRIPTOR_ENTRIES entries", async () => {
    const counters = recordingCounters();
    const body = JSON.stringify({ domain: "limits", descriptors: manyDescriptors(64) });
    const atLimit = await postJson({ RATE_LIMIT_COUNTER: counters.binding }, body);
    expect(atLimit.status).toBe(200);
    expect(counters.objects).toHaveLength(64);
    const entries = Array.from({ length: 32 }, (_, i) => [`e${i}`, "v"] as [string, string]);
    expect((await rateLimit({ domain: "limits", descriptors: [descriptor(...entries)] })).status).toBe(200);
  });

  it("refuses a descriptor with too many entries before any counter is touched", async () => {
    const counters = recordingCounters();
    const entries = Array.from({ length: 33 }, (_, i) => [`e${i}`, "v"] as [string, string]);
    const body = JSON.stringify({ domain: "limits", descriptors: [descriptor(["k", "v"]), descriptor(...entries)] });
    const response = await postJson({ RATE_LIMIT_COUNTER: counters.binding }, body);
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(TOO_MANY_ENTRIES);
    expect(counters.objects).toEqual([]);
  });

  it("reads the descriptor limits from the settings", async () => {
    const body = JSON.stringify({ domain: "limits", descriptors: manyDescriptors(3) });
    const response = await postJson({ RATELIMIT_MAX_DESCRIPTORS: "2" }, body);
    expect(response.status).toBe(400);
    const message = "the request has 3 descriptors, more than 2 (the limit set by RATELIMIT_MAX_DESCRIPTORS)";
    expect(await response.text()).toBe(message);
  });

  it("refuses a body over 1 MiB with 413 and the exact body", async () => {
    const body = JSON.stringify({ domain: "limits", descriptors: [descriptor(["k", "x".repeat(MiB)])] });
    await expectRefusedBeforeCounting(body, 413, REQUEST_BYTES);
  });

  it("refuses a field given twice with 400, as Go's protojson does, before any counter is touched", async () => {
    const entry = '{"key":"k","value":"v"}';
    await expectRefusedBeforeCounting(
      `{"domain":"limits","descriptors":[{"entries":[${entry}]}],"domain":"other"}`,
      400,
      "domain: given twice",
    );
  });

  it("refuses a body nested deeper than the limit with 400", async () => {
    const body = `{"domain":"limits","descriptors":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    const response = await callJson("/json", "POST", body);
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(`request body ${TOO_DEEP}`);
  });

  it("refuses a body that is not UTF-8 with 400 rather than replacing the bytes", async () => {
    const counters = recordingCounters();
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"domain":"limits","descriptors":[{"entries":[{"key":"k","value":"'),
      0xc3,
      0x28,
      ...new TextEncoder().encode('"}]}]}'),
    ]);
    const response = await postJson({ RATE_LIMIT_COUNTER: counters.binding }, bytes);
    expect(response.status).toBe(400);
    expect(await response.text()).toBe("request body is not valid UTF-8");
    expect(counters.objects).toEqual([]);
  });
});

describe("ShouldRateLimit over Connect and gRPC-Web", () => {
  it.each(["Connect binary", "Connect JSON", "gRPC-Web"] as const)(
    "refuses 10,000 descriptors with INVALID_ARGUMENT before any counter is touched, over %s",
    async (path) => {
      const counters = recordingCounters();
      const client = clients({ RATE_LIMIT_COUNTER: counters.binding })[path];
      const request = { domain: "limits", descriptors: manyDescriptors(10_000) };
      expect(await connectErrorOf(client.shouldRateLimit(request))).toEqual({
        code: Code.InvalidArgument,
        message: TOO_MANY_DESCRIPTORS,
      });
      const entries = Array.from({ length: 33 }, (_, i) => [`e${i}`, "v"] as [string, string]);
      const tooLong = { domain: "limits", descriptors: [descriptor(["k", "v"]), descriptor(...entries)] };
      expect(await connectErrorOf(client.shouldRateLimit(tooLong))).toEqual({
        code: Code.InvalidArgument,
        message: TOO_MANY_ENTRIES,
      });
      expect(counters.objects).toEqual([]);
    },
  );

  it.each(["Connect binary", "Connect JSON", "gRPC-Web"] as const)(
    "refuses a message over 1 MiB with RESOURCE_EXHAUSTED naming the limit, over %s",
    async (path) => {
      const counters = recordingCounters();
      const client = clients({ RATE_LIMIT_COUNTER: counters.binding })[path];
      const request = { domain: "x".repeat(MiB), descriptors: [descriptor(["k", "v"])] };
      expect(await connectErrorOf(client.shouldRateLimit(request))).toEqual({
        code: Code.ResourceExhausted,
        message: REQUEST_BYTES,
      });
      expect(counters.objects).toEqual([]);
    },
  );

  it("answers the reverse bridge's oversized raw message with Connect's resource_exhausted", async () => {
    const message = toBinary(RateLimitRequestSchema, create(RateLimitRequestSchema, { domain: "x".repeat(MiB) }));
    const headers = { "content-type": "application/proto" };
    const response = await call(PATH, { method: "POST", headers, body: message });
    expect([response.status, response.headers.get("content-type")]).toEqual([429, "application/json"]);
    expect(await response.json()).toEqual({ code: "resource_exhausted", message: REQUEST_BYTES });
  });

  it("answers an oversized gRPC-Web call with a trailers frame carrying grpc-status 8", async () => {
    const vars = { RATELIMIT_MAX_REQUEST_BYTES: "100" };
    const frame = new Uint8Array(5 + 200);
    new DataView(frame.buffer).setUint32(1, 200);
    const response = await callWithEnv(vars, PATH, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto" },
      body: frame,
    });
    expect([response.status, response.headers.get("content-type")]).toEqual([200, "application/grpc-web+proto"]);
    const body = new Uint8Array(await response.arrayBuffer());
    expect(body[0]).toBe(0x80);
    expect(new DataView(body.buffer).getUint32(1)).toBe(body.length - 5);
    expect(new TextDecoder().decode(body.slice(5))).toBe(
      "grpc-message: request%20body%20is%20larger%20than%20100%20bytes%20(the%20limit%20set%20by%20" +
        "RATELIMIT_MAX_REQUEST_BYTES)\r\ngrpc-status: 8\r\n",
    );
  });

  it("answers an oversized body of another content type as the router answers that type", async () => {
    const vars = { RATELIMIT_MAX_REQUEST_BYTES: "100" };
    const headers = { "content-type": "application/grpc" };
    const grpc = await callWithEnv(vars, PATH, { method: "POST", headers, body: new Uint8Array(200) });
    expect(grpc.status).toBe(415);
  });
});
