// RATELIMIT_MAX_VALUE_BYTES through the real Worker on every wire of ShouldRateLimit: a domain, entry key or value
// longer than the limit in UTF-8 bytes, and a descriptor whose counter key would pass what the counter stores are
// given, are refused with the exact answer each wire gives an invalid request, before any counter is touched.
import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { connectErrorOf, descriptor, installConfig } from "../support/ratelimit-calls";
import { clients, postJson, postRawProto, recordingCounters } from "../support/ratelimit-wires";

const CONFIG =
  "domain: values\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: hour\n      requests_per_unit: 5\n";
const KiB = 1024;
const LIMIT = "65536 (the limit set by RATELIMIT_MAX_VALUE_BYTES)";

type Request = { domain: string; descriptors: ReturnType<typeof descriptor>[] };

const WIRES = ["/json", "Connect binary", "Connect JSON", "gRPC-Web", "raw application/proto"] as const;
type Wire = (typeof WIRES)[number];

/**
 * The request's answer on `wire` when refused as invalid: /json's 400 text, Connect's and gRPC-Web's INVALID_ARGUMENT
 * as the client reads it, the bare binary call's 400 Connect error; and the counter objects the request reached.
 */
async function refusal(wire: Wire, request: Request, vars: Record<string, unknown> = {}) {
  const counters = recordingCounters();
  const withCounters = { ...vars, RATE_LIMIT_COUNTER: counters.binding };
  let answer: unknown;
  if (wire === "/json") {
    const response = await postJson(withCounters, JSON.stringify(request));
    answer = { status: response.status, type: response.headers.get("content-type"), body: await response.text() };
  } else if (wire === "raw application/proto") {
    const response = await postRawProto(withCounters, request);
    answer = { status: response.status, type: response.headers.get("content-type"), body: await response.json() };
  } else {
    answer = await connectErrorOf(clients(withCounters)[wire].shouldRateLimit(request));
  }
  return { answer, objects: counters.objects };
}

/** What `wire` answers for a request refused with `message`. */
function refused(wire: Wire, message: string) {
  if (wire === "/json") return { status: 400, type: "text/plain; charset=UTF-8", body: message };
  if (wire === "raw application/proto") {
    return { status: 400, type: "application/json", body: { code: "invalid_argument", message } };
  }
  return { code: Code.InvalidArgument, message };
}

beforeAll(async () => {
  await installConfig({ "values.yaml": CONFIG });
});

describe.each(WIRES)("ShouldRateLimit over %s", (wire) => {
  it("refuses a 200 KB value naming RATELIMIT_MAX_VALUE_BYTES, touching no counter", async () => {
    const request = { domain: "values", descriptors: [descriptor(["k", "a"]), descriptor(["k", "x".repeat(200_000)])] };
    expect(await refusal(wire, request)).toEqual({
      answer: refused(wire, `descriptor 1 entry 0: the value is 200000 bytes long, more than ${LIMIT}`),
      objects: [],
    });
  });

  it("counts a key in UTF-8 bytes, not characters", async () => {
    // 21,846 characters of three bytes each: 65,538 bytes, past the limit though far fewer characters.
    const key = "€".repeat(21_846);
    const request = { domain: "values", descriptors: [descriptor(["k", "a"], [key, "v"])] };
    expect(await refusal(wire, request)).toEqual({
      answer: refused(wire, `descriptor 0 entry 1: the key is 65538 bytes long, more than ${LIMIT}`),
      objects: [],
    });
  });

  it("refuses a 200 KB domain naming the same setting", async () => {
    const request = { domain: "d".repeat(200 * KiB), descriptors: [descriptor(["k", "a"])] };
    expect(await refusal(wire, request)).toEqual({
      answer: refused(wire, `the domain is 204800 bytes long, more than ${LIMIT}`),
      objects: [],
    });
  });

  it("reads the limit from the setting", async () => {
    const request = { domain: "values", descriptors: [descriptor(["k", "ünicode"])] };
    expect(await refusal(wire, request, { RATELIMIT_MAX_VALUE_BYTES: "7" })).toEqual({
      answer: refused(
        wire,
        "descriptor 0 entry 0: the value is 8 bytes long, more than 7 (the limit set by RATELIMIT_MAX_VALUE_BYTES)",
      ),
      objects: [],
    });
  });

  it("refuses a descriptor whose counter key would pass 1 MiB, whatever the body limit allows", async () => {
    // 20 values of 60 KiB each pass RATELIMIT_MAX_VALUE_BYTES; their counter key would be 1,228,897 bytes.
    const entries = Array.from({ length: 20 }, (_, i) => [`k${i}`, "v".repeat(60 * KiB)] as [string, string]);
    const request = { domain: "values", descriptors: [descriptor(...entries)] };
    const bytes = "values_".length + entries.reduce((sum, [key]) => sum + key.length + 60 * KiB + 2, 0);
    expect(bytes).toBe(1_228_897);
    expect(await refusal(wire, request, { RATELIMIT_MAX_REQUEST_BYTES: String(4 * 1024 * KiB) })).toEqual({
      answer: refused(
        wire,
        `descriptor 0 makes a counter key of ${bytes} bytes, more than the 1048576 the counter stores are given`,
      ),
      objects: [],
    });
  });
});

describe("a value of exactly RATELIMIT_MAX_VALUE_BYTES", () => {
  it("is counted on its own counter, on every wire", async () => {
    for (const wire of WIRES) {
      const value = `${wire}:`.padEnd(64 * KiB, "v");
      const counters = recordingCounters();
      const vars = { RATE_LIMIT_COUNTER: counters.binding };
      const request = { domain: "values", descriptors: [descriptor(["k", value])] };
      let overall: unknown;
      if (wire === "/json") {
        const response = await postJson(vars, JSON.stringify(request));
        overall = response.status === 200 && ((await response.json()) as { overallCode: string }).overallCode;
      } else if (wire === "raw application/proto") {
        overall = (await postRawProto(vars, request)).status === 200 && "OK";
      } else {
        overall = (await clients(vars)[wire].shouldRateLimit(request)).overallCode === 1 && "OK";
      }
      expect([wire, overall, counters.objects]).toEqual([wire, "OK", [`values_k_${value}_`]]);
    }
  });
});
