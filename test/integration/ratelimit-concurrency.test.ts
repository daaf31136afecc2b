// Exact admission under real concurrency: 2000 simultaneous POST /json hits on one key of limit 100, through
// wrangler dev and a real Durable Object, admit exactly 100; and bursts that arrive when the isolate's config check is
// due all get their answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWranglerDev, type DevServer } from "../support/servers.mjs";

let server: DevServer;
const ADMIN = { Authorization: "Bearer integration-admin-token", "content-type": "application/json" };
const CONFIG =
  "domain: burst\ndescriptors:\n  - key: hot\n    rate_limit:\n      unit: day\n      requests_per_unit: 100\n";

beforeAll(async () => {
  server = await startWranglerDev({ RATELIMIT_ADMIN_TOKEN: "integration-admin-token" });
  const response = await fetch(`${server.url}/rlconfig/files`, {
    method: "PUT",
    headers: ADMIN,
    body: JSON.stringify({ files: { "burst.yaml": CONFIG } }),
  });
  expect(response.status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

describe("POST /json under concurrency", () => {
  it("admits exactly 100 of 2000 concurrent hits on a key limited to 100", async () => {
    // Warm the isolate and the object so the burst measures counting, not start-up.
    const warm = JSON.stringify({ domain: "burst", descriptors: [{ entries: [{ key: "hot", value: "warm-up" }] }] });
    for (let i = 0; i < 5; i++)
      expect((await fetch(`${server.url}/json`, { method: "POST", body: warm })).status).toBe(200);

    const body = JSON.stringify({ domain: "burst", descriptors: [{ entries: [{ key: "hot", value: "one-key" }] }] });
    const statuses = await Promise.all(
      Array.from({ length: 2000 }, async () => {
        const response = await fetch(`${server.url}/json`, { method: "POST", body });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const counts: Record<number, number> = {};
    for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
    expect(counts).toEqual({ 200: 100, 429: 1900 });

    const after = await fetch(`${server.url}/json`, { method: "POST", body });
    expect(await after.json()).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [
        {
          code: "OVER_LIMIT",
          currentLimit: { requestsPerUnit: 100, unit: "DAY" },
          durationUntilReset: expect.stringMatching(/^\d+s$/),
        },
      ],
    });
  });

  it("answers every request of a burst that arrives when the isolate's config check is due", async () => {
    // Each burst lands after the check interval (1 s), so its requests find the config view stale together, on
    // objects that do not exist yet. One request's D1 read must not become the others' I/O: each answers 200.
    for (let burst = 0; burst < 3; burst++) {
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const answers = await Promise.all(
        Array.from({ length: 60 }, async (_, i) => {
          const body = JSON.stringify({
            domain: "burst",
            descriptors: [{ entries: [{ key: "hot", value: `fresh-${burst}-${i}` }] }],
          });
          const response = await fetch(`${server.url}/json`, { method: "POST", body });
          const text = (await response.text()).replace(/"durationUntilReset":"\d+s"/, '"durationUntilReset":"<left>"');
          return `${response.status} ${text}`;
        }),
      );
      const counts: Record<string, number> = {};
      for (const answer of answers) counts[answer] = (counts[answer] ?? 0) + 1;
      const ok = JSON.stringify({
        overallCode: "OK",
        statuses: [
          {
            code: "OK",
            currentLimit: { requestsPerUnit: 100, unit: "DAY" },
            limitRemaining: 99,
            durationUntilReset: "<left>",
          },
        ],
      });
      expect(counts).toEqual({ [`200 ${ok}`]: 60 });
    }
  });
});
