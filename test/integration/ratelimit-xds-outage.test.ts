// The xDS management server going away behind the gRPC gateway (CONFIG_TYPE=GRPC_XDS_SOTW), with a real `wrangler
// dev`: the set of the last snapshot, stored in the Worker, keeps deciding over gRPC and /json while the gateway tries
// to reconnect; a gateway started during the outage serves only with FORCE_START_WITHOUT_INITIAL_CONFIG; once the
// server is back, the client subscribes again with the version it holds and takes the next snapshot.
import grpc from "@grpc/grpc-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { proto3Json, rateLimitClient, type RateLimitClient } from "../support/grpc-gateway";
import { startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";
import { startManagementServer } from "../support/xds-server";
import { limits, startXdsGatewayProcess } from "../support/xds-gateway";

const TOKEN = "integration-admin-token";
const REQUEST = { domain: "outage", descriptors: [{ entries: [{ key: "path", value: "/login" }] }] };

let worker: DevServer;
const running: { stop(): Promise<void> }[] = [];
const clients: RateLimitClient[] = [];

beforeAll(async () => {
  worker = await startWranglerDev({ RATELIMIT_ADMIN_TOKEN: TOKEN, CONFIG_TYPE: "GRPC_XDS_SOTW" });
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await Promise.all(running.splice(0).map((part) => part.stop()));
});

afterAll(async () => {
  await worker?.stop();
});

/** A gateway as node `node` of the server on `serverPort`, stopped after the test, and a gRPC client of it. */
async function gatewayAs(node: string, serverPort: number, vars: Record<string, string> = {}) {
  const gateway = await startXdsGatewayProcess({
    upstreamUrl: worker.url,
    token: TOKEN,
    serverPort,
    vars: { CONFIG_GRPC_XDS_NODE_ID: node, ...vars },
  });
  running.push(gateway);
  const client = rateLimitClient(`127.0.0.1:${gateway.port}`);
  clients.push(client);
  return { gateway, client };
}

/**
 * The overall code and the limit a ShouldRateLimit answers over gRPC, or its failure's code. (Not the hits left: a
 * minute's window may turn during the test.)
 */
async function grpcDecision(client: RateLimitClient, deadlineMs = 10_000) {
  const answer = await client.shouldRateLimit(REQUEST, deadlineMs);
  if (!answer.ok) return { code: answer.code, details: answer.details };
  const value = proto3Json(answer.value) as { overallCode: string; statuses: { currentLimit: unknown }[] };
  return { overallCode: value.overallCode, limit: value.statuses[0].currentLimit };
}

async function jsonLimit() {
  const response = await fetch(`${worker.url}/json`, { method: "POST", body: JSON.stringify(REQUEST) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { statuses: { currentLimit: unknown }[] }).statuses[0].currentLimit;
}

const perMinute = (requestsPerUnit: number) => ({ requestsPerUnit, unit: "MINUTE" });

describe("the management server going away", () => {
  it("keeps the last snapshot deciding, and takes the next one once the server is back", async () => {
    const server = await startManagementServer();
    running.push({ stop: () => server.kill() });
    server.push("v1", [limits("outage-limits", "outage", { "/login": 50 })]);
    const { gateway, client } = await gatewayAs("first", server.port);
    await gateway.waitForLog("grpc-gateway: serving");
    expect(await grpcDecision(client)).toEqual({ overallCode: "OK", limit: perMinute(50) });

    await server.kill();
    await gateway.waitForLog("xds: stream failed");
    await gateway.waitForLog("xds: cannot reach the management server; trying again");
    // Callers see nothing of it: the set of v1 is the Worker's, and the gateway keeps serving.
    for (let i = 0; i < 3; i++) expect(await grpcDecision(client)).toEqual({ overallCode: "OK", limit: perMinute(50) });
    expect(await jsonLimit()).toEqual(perMinute(50));

    // A gateway started now waits for a first snapshot (as the reference): gRPC is not served, unless it was told
    // to start without one, and then it decides with the set the Worker holds.
    const waiting = await gatewayAs("late", server.port);
    await waiting.gateway.waitForLog("grpc-gateway: waiting for the first xDS snapshot before serving");
    expect(await grpcDecision(waiting.client, 1000)).toEqual({
      code: grpc.status.UNAVAILABLE,
      details: expect.stringMatching(/^No connection established\. Last error: Error: connect ECONNREFUSED /),
    });
    const forced = await gatewayAs("forced", server.port, { FORCE_START_WITHOUT_INITIAL_CONFIG: "true" });
    await forced.gateway.waitForLog("grpc-gateway: serving");
    expect(await grpcDecision(forced.client)).toEqual({ overallCode: "OK", limit: perMinute(50) });

    // Back with a new snapshot: each client subscribes again, "first" with the version it holds, and applies it.
    const before = server.seen.length;
    const back = Date.now();
    await server.restart({ version: "v2", resources: [limits("outage-limits", "outage", { "/login": 40 })] });
    const resubscribed = await server.waitFor((seen) => seen.request.node?.id === "first", before);
    expect(resubscribed.request.versionInfo).toBe("v1");
    await server.waitFor((seen) => seen.request.node?.id === "first" && seen.request.versionInfo === "v2", before);
    // With this test's backoffs (200 ms, at most 1 s) and connection retries (200 ms); by default at most the
    // backoff after the break (10 s, spread by half) or the connection retry (3 s), whichever ends later.
    expect(Date.now() - back).toBeLessThan(10_000);
    expect(await grpcDecision(client)).toEqual({ overallCode: "OK", limit: perMinute(40) });
    await waiting.gateway.waitForLog("grpc-gateway: serving");
    // grpc-js backs off the connection it found refused (shared by every client of the address): ask until it is up.
    let late = await grpcDecision(waiting.client);
    for (let i = 0; i < 50 && "code" in late; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      late = await grpcDecision(waiting.client);
    }
    expect(late).toEqual({ overallCode: "OK", limit: perMinute(40) });
    expect(gateway.output()).not.toMatch(/snapshot refused/);
  });
});
