// Leases through wrangler dev and real Durable Objects (COUNTER_LEASES=true, per_key layout): simultaneous POST /json
// bursts on one key limited to 100 admit 95 to 100, never more, every answer 200 or 429; a steady stream on a hot key
// costs at most 0.05 object calls per decision (ratelimit.durable_object.calls on /stats), and once it stops the
// shares come back (leases_returned).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getWithRetry, startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";
import { agent, CONNECTIONS, proxyLosses, refreshProxyConnections, send } from "../support/ratelimit-kept-alive";
import { parseStats, statDelta } from "../support/ratelimit-stats-page";

const TOKEN = "integration-admin-token";
const ADMIN = { Authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const CONFIG = `domain: leased
descriptors:
  - key: hot
    rate_limit:
      unit: day
      requests_per_unit: 100
  - key: stream
    rate_limit:
      unit: day
      requests_per_unit: 100000000
`;

/** The status of one request over the suite's kept-alive connections. */
const statusOf = async (server: DevServer, body: string) => (await send(server, "POST", "/json", body)).status;

const hit = (key: string, value: string) =>
  JSON.stringify({ domain: "leased", descriptors: [{ entries: [{ key, value }] }] });

function tally(values: number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

describe("POST /json with COUNTER_LEASES=true", () => {
  let server: DevServer;
  const stats = async () =>
    parseStats(
      await (await getWithRetry(`${server.url}/stats`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text(),
    );

  beforeAll(async () => {
    server = await startWranglerDev({ RATELIMIT_ADMIN_TOKEN: TOKEN, COUNTER_LEASES: "true" });
    const response = await fetch(`${server.url}/rlconfig/files`, {
      method: "PUT",
      headers: ADMIN,
      body: JSON.stringify({ files: { "leased.yaml": CONFIG } }),
    });
    expect(response.status).toBe(200);
    for (let i = 0; i < 5; i++) expect(await statusOf(server, hit("hot", "warm-up"))).toBe(200);
  });

  afterAll(async () => {
    agent.destroy();
    await server?.stop();
    console.log(`requests wrangler dev's proxy lost and send sent again: ${proxyLosses.resent}`);
  });

  it.each([600, 2000])("admits 95 to 100 of %i concurrent hits on a key limited to 100, never more", async (count) => {
    await refreshProxyConnections(server);
    const body = hit("hot", `burst-${count}`);
    const counts = tally(await Promise.all(Array.from({ length: count }, () => statusOf(server, body))));
    expect(Object.keys(counts).sort()).toEqual(["200", "429"]);
    expect(counts[200]).toBeGreaterThanOrEqual(95);
    expect(counts[200]).toBeLessThanOrEqual(100);
    expect(counts[429]).toBe(count - counts[200]);
  });

  it("answers a steady stream on a hot key with at most 0.05 object calls per decision, then takes shares back", async () => {
    await refreshProxyConnections(server);
    // Earlier objects' statistics land within a second.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const before = await stats();
    const body = hit("stream", "one");
    const statuses: number[] = [];
    const client = async () => {
      for (let i = 0; i < 60; i++) statuses.push(await statusOf(server, body));
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, client));
    expect(tally(statuses)).toEqual({ 200: CONNECTIONS * 60 });
    // The give-back (300 ms after the stream stops) and the objects' flush (within a second).
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const after = await stats();
    const calls = statDelta(before, after, "ratelimit.durable_object.calls");
    expect(calls).toBeGreaterThan(0);
    expect(calls / statuses.length).toBeLessThanOrEqual(0.05);
    expect(statDelta(before, after, "ratelimit.durable_object.leases_granted")).toBeGreaterThan(0);
    expect(statDelta(before, after, "ratelimit.durable_object.leases_returned")).toBeGreaterThan(0);
  }, 120_000);
});
