// The command-line client's printed response, run as a process against a fake RateLimitService: a reset the Worker
// sends with milliseconds (nanos) prints as POST /json writes it ("0.100s"), not cut to its whole seconds.
import grpc from "@grpc/grpc-js";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadProto } from "../../grpc-gateway/proto.mjs";

const client = path.join(import.meta.dirname, "..", "..", "grpc-gateway", "client.mjs");
const { RateLimitService } = loadProto("envoy/service/ratelimit/v3/rls.proto").envoy.service.ratelimit.v3;

/** Each status the fake server answers, one per durationUntilReset below. */
const RESETS = [
  { seconds: 0, nanos: 100_000_000 },
  { seconds: 58 },
  { seconds: 3, nanos: 5_000_000 },
  { nanos: 999_999_999 },
  {},
];

let server: grpc.Server;
let port: number;

beforeAll(async () => {
  server = new grpc.Server();
  server.addService(RateLimitService.service, {
    ShouldRateLimit: (_call: unknown, callback: grpc.sendUnaryData<unknown>) =>
      callback(null, {
        overallCode: "OK",
        statuses: RESETS.map((durationUntilReset) => ({ code: "OK", limitRemaining: 1, durationUntilReset })),
      }),
  });
  port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
});

afterAll(() => server.forceShutdown());

describe("npm run client: the printed response", () => {
  it("writes each durationUntilReset with its milliseconds, as POST /json does", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      client,
      "-dial_string",
      `127.0.0.1:${port}`,
      "-domain",
      "d",
      "-descriptors",
      "k=v",
    ]);
    const response = stdout.split("\n").find((line) => line.startsWith("response: "));
    const statuses = JSON.parse(response!.slice("response: ".length)).statuses;
    expect(statuses.map((status: { durationUntilReset: string }) => status.durationUntilReset)).toEqual([
      "0.100s",
      "58s",
      "3.005s",
      "1s",
      "0s",
    ]);
  });
});
