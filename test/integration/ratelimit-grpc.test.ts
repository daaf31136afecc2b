// Real HTTP/2 gRPC through the Node gateway to a real `wrangler dev`, with @grpc/grpc-js and proto/: decisions
// equal to POST /json's, error codes, dynamic metadata as a Struct, the health check and the command-line client.
import grpc from "@grpc/grpc-js";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { structToJson } from "../../grpc-gateway/proto.mjs";
import { clientEntry, proto3Json, rateLimitClient, startGateway } from "../support/grpc-gateway";
import { freePort } from "../support/processes.mjs";
import { startWranglerDev } from "../support/wrangler-dev.mjs";
import { GOLD_METADATA } from "../support/ratelimit-rules";
import { everyKindOfDescriptor } from "../support/ratelimit-requests";
import {
  ADMIN_TOKEN,
  certs,
  descriptor,
  grpcSuite,
  mutualTlsGateway,
  plain,
  track,
  worker,
} from "../support/ratelimit-grpc-suite";

/**
 * The seconds until reset follow the wall clock, so two calls a moment apart may differ by one: compared
 * apart from the rest (the Workers tests pin exact values with a frozen clock).
 */
function withoutResets(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, field) => {
      if (key !== "durationUntilReset") return field;
      expect(field).toMatch(/^\d+s$/);
      return "<reset>";
    }),
  );
}

async function postJson(body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${worker.url}/json`, { method: "POST", body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

const run = promisify(execFile);

async function runClient(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [clientEntry, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

grpcSuite({ worker: true });

describe("ShouldRateLimit through the gateway", () => {
  it("answers like POST /json for the same requests, on the same counters", async () => {
    const client = track(rateLimitClient(plain.target));
    // UInt64Value is {value} in a decoded message and a bare number in proto3 JSON.
    const request = (who: string, wrap: (n: number) => unknown) => ({
      domain: "grpc-it",
      descriptors: [
        ...everyKindOfDescriptor(who),
        {
          entries: [{ key: "client", value: `${who}-override` }],
          limit: { requestsPerUnit: 10, unit: "DAY" },
          hitsAddend: wrap(4),
        },
        { entries: [{ key: "client", value: `${who}-peek` }], hitsAddend: wrap(0) },
      ],
    });
    const grpcRequest = request("grpc", (n) => ({ value: String(n) }));
    const jsonRequest = request("json", (n) => n);
    for (let round = 0; round < 3; round++) {
      const viaGrpc = await client.shouldRateLimit(grpcRequest);
      const viaJson = await postJson(jsonRequest);
      expect(viaGrpc.ok).toBe(true);
      expect(withoutResets(proto3Json(viaGrpc.ok && viaGrpc.value))).toEqual(withoutResets(viaJson.body));
    }
    const last = await postJson(jsonRequest);
    expect(last).toEqual({
      status: 429,
      body: {
        overallCode: "OVER_LIMIT",
        statuses: [
          {
            code: "OVER_LIMIT",
            currentLimit: { requestsPerUnit: 3, unit: "DAY" },
            durationUntilReset: expect.stringMatching(/^\d+s$/),
          },
          {
            code: "OVER_LIMIT",
            currentLimit: { requestsPerUnit: 2, unit: "DAY", name: "per-user" },
            durationUntilReset: expect.stringMatching(/^\d+s$/),
          },
          { code: "OK" },
          { code: "OK", limitRemaining: 4294967295 },
          { code: "OK" },
          {
            code: "OVER_LIMIT",
            currentLimit: { requestsPerUnit: 10, unit: "DAY" },
            durationUntilReset: expect.stringMatching(/^\d+s$/),
          },
          {
            code: "OK",
            currentLimit: { requestsPerUnit: 3, unit: "DAY" },
            limitRemaining: 3,
            durationUntilReset: expect.stringMatching(/^\d+s$/),
          },
        ],
      },
    });

    // One key, alternating paths: each hit counts for both.
    const shared = { domain: "grpc-it", descriptors: [descriptor(["client", "shared"])] };
    const remaining = [];
    for (let i = 0; i < 2; i++) {
      const viaGrpc = await client.shouldRateLimit(shared);
      remaining.push((proto3Json(viaGrpc.ok && viaGrpc.value) as any).statuses[0].limitRemaining);
      remaining.push(((await postJson(shared)).body as any).statuses[0].limitRemaining);
    }
    expect(remaining).toEqual([2, 1, undefined, undefined]);
    const over = await client.shouldRateLimit(shared);
    expect(over.ok && over.value.overallCode).toBe("OVER_LIMIT");
  });

  it.each([
    [
      "an empty domain",
      { domain: "", descriptors: [descriptor(["a", "b"])] },
      grpc.status.UNKNOWN,
      "rate limit domain must not be empty",
    ],
    [
      "no descriptors",
      { domain: "grpc-it", descriptors: [] },
      grpc.status.UNKNOWN,
      "rate limit descriptor list must not be empty",
    ],
    [
      "an override without a unit",
      { domain: "grpc-it", descriptors: [{ entries: [{ key: "a", value: "b" }], limit: { requestsPerUnit: 5 } }] },
      grpc.status.INVALID_ARGUMENT,
      "descriptor 0: limit override needs a unit",
    ],
  ])("answers %s with the reference's status and message", async (_label, request, code, details) => {
    const client = track(rateLimitClient(plain.target));
    expect(await client.shouldRateLimit(request)).toEqual({ ok: false, code, details });
  });

  it("refuses 10,000 descriptors with INVALID_ARGUMENT naming the limit", async () => {
    const client = track(rateLimitClient(plain.target));
    const descriptors = Array.from({ length: 10_000 }, (_, i) => descriptor(["client", `many-${i}`]));
    expect(await client.shouldRateLimit({ domain: "grpc-it", descriptors })).toEqual({
      ok: false,
      code: grpc.status.INVALID_ARGUMENT,
      details: "the request has 10000 descriptors, more than 64 (the limit set by RATELIMIT_MAX_DESCRIPTORS)",
    });
  });

  it("refuses a 200 KB value with INVALID_ARGUMENT naming RATELIMIT_MAX_VALUE_BYTES, counting nothing", async () => {
    const client = track(rateLimitClient(plain.target));
    const id = `padded-${crypto.randomUUID()}`;
    const descriptors = [descriptor(["client", id]), descriptor(["client", "x".repeat(200_000)])];
    expect(await client.shouldRateLimit({ domain: "grpc-it", descriptors })).toEqual({
      ok: false,
      code: grpc.status.INVALID_ARGUMENT,
      details:
        "descriptor 1 entry 0: the value is 200000 bytes long, more than 65536 (the limit set by RATELIMIT_MAX_VALUE_BYTES)",
    });
    // The first descriptor was not counted either: its 3 a day are all left.
    const codes = [];
    for (let i = 0; i < 4; i++) {
      const answer = await client.shouldRateLimit({ domain: "grpc-it", descriptors: [descriptor(["client", id])] });
      codes.push(answer.ok && answer.value.overallCode);
    }
    expect(codes).toEqual(["OK", "OK", "OK", "OVER_LIMIT"]);
  });
});

const METADATA_CONFIG = `domain: grpc-meta
descriptors:
  - key: tagged
${GOLD_METADATA}
      free: true
      nothing: ~
    rate_limit:
      unit: day
      requests_per_unit: 5
  - key: unlimited
    metadata:
      open: true
    rate_limit:
      unlimited: true
  - key: client
    rate_limit:
      unit: day
      requests_per_unit: 3
`;

describe("RESPONSE_DYNAMIC_METADATA", () => {
  it("answers dynamic_metadata as a google.protobuf.Struct equal to what POST /json answers", async () => {
    const described = await startWranglerDev(
      { RATELIMIT_ADMIN_TOKEN: ADMIN_TOKEN, RESPONSE_DYNAMIC_METADATA: "true" },
      { name: "wrangler dev (dynamic metadata)" },
    );
    try {
      const put = await fetch(`${described.url}/rlconfig/files`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ files: { "grpc-meta.yaml": METADATA_CONFIG } }),
      });
      expect(put.status).toBe(200);
      const gateway = track(
        await startGateway({ RATELIMIT_UPSTREAM_URL: described.url, GRPC_PORT: String(await freePort()) }),
      );
      const client = track(rateLimitClient(gateway.target));
      // UInt64Value is {value} in a decoded message and a bare number in proto3 JSON.
      const request = (wrap: (n: number) => unknown) => ({
        domain: "grpc-meta",
        hitsAddend: 1,
        descriptors: [
          descriptor(["tagged", "t"]),
          { entries: [{ key: "unlimited", value: "u" }], hitsAddend: wrap(0) },
          { entries: [{ key: "client", value: "c" }], limit: { requestsPerUnit: 10, unit: "DAY" } },
        ],
      });
      const viaGrpc = await client.shouldRateLimit(request((n) => ({ value: String(n) })));
      const viaJson = await fetch(`${described.url}/json`, {
        method: "POST",
        body: JSON.stringify(request((n) => n)),
      });
      const json = (await viaJson.json()) as { dynamicMetadata: unknown };
      if (!viaGrpc.ok) throw new Error(`ShouldRateLimit failed: ${viaGrpc.details}`);
      const struct = viaGrpc.value.dynamicMetadata as { fields: Record<string, Record<string, any>> };
      // A Struct on the wire: each field a google.protobuf.Value.
      expect(struct.fields.domain).toEqual({ stringValue: "grpc-meta" });
      expect(struct.fields.hitsAddend).toEqual({ numberValue: 1 });
      expect(structToJson(struct)).toEqual(json.dynamicMetadata);
      // The unlimited rule's metadata (open: true) is not merged, as in the reference (ratelimit-reference.md §4.11).
      expect(json.dynamicMetadata).toEqual({
        domain: "grpc-meta",
        descriptors: [
          { entries: ["tagged=t"] },
          { entries: ["unlimited=u"], hitsAddend: 0 },
          { entries: ["client=c"], limit: "requests_per_unit:10 unit:DAY" },
        ],
        hitsAddend: 1,
        metadata: {
          tier: "gold",
          limits: { daily: 100 },
          tags: ["a", "b"],
          ratio: 0.5,
          free: true,
          nothing: null,
        },
      });
    } finally {
      await described.stop();
    }
  });
});

describe("health", () => {
  it("mirrors the Worker's /healthcheck for the service ratelimit", async () => {
    const client = track(rateLimitClient(plain.target));
    expect(await client.check("ratelimit")).toEqual({ ok: true, value: { status: "SERVING" } });
    expect(await client.check("envoy.service.ratelimit.v3.RateLimitService")).toEqual({
      ok: true,
      value: { status: "SERVING" },
    });
    expect(await client.check("")).toEqual({ ok: true, value: { status: "SERVING" } });
    expect(await client.check("nope")).toEqual({
      ok: false,
      code: grpc.status.NOT_FOUND,
      details: "unknown service",
    });
  });

  it("answers NOT_SERVING while the Worker is unreachable, and UNAVAILABLE to calls long before their deadline", async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const gateway = track(await startGateway({ RATELIMIT_UPSTREAM_URL: nowhere, GRPC_PORT: "0" }));
    const client = track(rateLimitClient(gateway.target));
    expect(await client.check("ratelimit")).toEqual({ ok: true, value: { status: "NOT_SERVING" } });
    expect(await client.check("")).toEqual({ ok: true, value: { status: "SERVING" } });
    const call = await client.shouldRateLimit({ domain: "grpc-it", descriptors: [descriptor(["a", "b"])] }, 60_000);
    expect(call).toEqual({
      ok: false,
      code: grpc.status.UNAVAILABLE,
      details: "rate limit service unreachable: ECONNREFUSED",
    });
  });
});

describe("the command-line client", () => {
  it("prints the decision, as POST /json gives it, for repeated -descriptors", async () => {
    const result = await runClient([
      "-dial_string",
      plain.target,
      "-domain",
      "grpc-it",
      "-descriptors",
      "client=cli",
      "-descriptors",
      "user=cli,extra=x",
    ]);
    expect(result.code).toBe(0);
    const line = result.stdout.split("\n").find((text) => text.startsWith("response: "))!;
    const printed = JSON.parse(line.slice("response: ".length));
    const viaJson = await postJson({
      domain: "grpc-it",
      descriptors: [descriptor(["client", "cli-json"]), descriptor(["user", "cli"], ["extra", "x"])],
    });
    expect(withoutResets(printed)).toEqual(withoutResets(viaJson.body));
    expect(printed.statuses[0]).toMatchObject({ code: "OK", limitRemaining: 2 });
  });

  it("exits 1 with the status on an error, and on a malformed descriptor", async () => {
    const failed = await runClient(["-dial_string", plain.target, "-domain=", "-descriptors", "a=b"]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(
      "request error: rpc error: code = Unknown desc = rate limit domain must not be empty",
    );
    const malformed = await runClient(["-dial_string", plain.target, "-domain", "grpc-it", "-descriptors", "a=b=c"]);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain('invalid descriptor list: "a=b=c"');
    const unreachable = await runClient([
      "-dial_string",
      `127.0.0.1:${await freePort()}`,
      "-domain",
      "grpc-it",
      "-descriptors",
      "a=b",
    ]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain("request error: rpc error: code = Unavailable");
  });

  it("speaks TLS with -grpc-use-tls and the CA file", async () => {
    const gateway = await mutualTlsGateway();
    const result = await runClient([
      "-dial_string",
      gateway.target,
      "-grpc-use-tls",
      "-grpc-server-ca-file",
      certs.caPem,
      "-grpc-cert-file",
      certs.clientCert,
      "-grpc-key-file",
      certs.clientKey,
      "-domain",
      "grpc-it",
      "-descriptors",
      "unlimited=cli",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'response: {"overallCode":"OK","statuses":[{"code":"OK","limitRemaining":4294967295}]}',
    );
  });
});
