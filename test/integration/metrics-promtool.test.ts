// /metrics of a real `wrangler dev` after decisions of every kind (near and over limit, shadow mode, detailed metrics,
// an unknown domain) and the counter objects' own statistics: Prometheus's promtool must parse it without a problem.
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATS_CONFIG, statsSequence } from "../support/ratelimit-stats-fixture";
import { requireBinary } from "../support/system-programs.mjs";
import { getWithRetry, startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";

const TOKEN = "integration-admin-token";
const ADMIN = { Authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
let server: DevServer;

beforeAll(async () => {
  requireBinary("promtool");
  server = await startWranglerDev({ RATELIMIT_ADMIN_TOKEN: TOKEN, STATS_FLUSH_INTERVAL: "1s" }, { name: "metrics" });
  const put = await fetch(`${server.url}/rlconfig/files`, {
    method: "PUT",
    headers: ADMIN,
    body: JSON.stringify({ files: { "promtool.yaml": STATS_CONFIG("promtool") } }),
  });
  expect(put.status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

describe("GET /metrics", () => {
  it("passes promtool check metrics after decisions of every kind", async () => {
    for (const step of statsSequence("promtool", "promtool_unknown")) {
      const body = {
        domain: step.domain,
        descriptors: step.descriptors.map((entries) => ({ entries: entries.map(([key, value]) => ({ key, value })) })),
      };
      const response = await fetch(`${server.url}/json`, { method: "POST", body: JSON.stringify(body) });
      await response.arrayBuffer();
    }
    // The counter objects flush their statistics within a second.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const response = await getWithRetry(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await response.text();
    expect(text).toContain("ratelimit_service_rate_limit_total_hits");
    expect(text).toContain("ratelimit_durable_object_operations");
    const checked = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    // Exit 1 would be a page promtool cannot parse; 3 is lint advice. The only advice allowed is the `_total` suffix:
    // the counters keep the names the reference's statsd_exporter mapping gives them, so that dashboards carry over.
    const advice = (checked.stdout + checked.stderr).split("\n").filter(Boolean);
    expect(checked.status === 0 || checked.status === 3).toBe(true);
    expect(advice.filter((line) => !line.endsWith('counter metrics should have "_total" suffix'))).toEqual([]);
  });
});
