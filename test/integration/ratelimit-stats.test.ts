// Push metrics and traces from a real `wrangler dev`: statsd lines over TCP (cloudflare:sockets) to a listener in
// this test, tagged statsd lines rewritten by mogrifiers (set through the reference's DOG_STATSD names), and spans
// exported over OTLP/HTTP to a local endpoint, joined to the caller's traceparent. Flushes run every second.
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server as HttpServer } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectedRuleStats, STATS_CONFIG, statsSequence } from "../support/ratelimit-stats-fixture";
import { getWithRetry, refreshProxyConnection, startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";
import { executionSpan } from "../support/ratelimit-spans";

const TOKEN = "integration-admin-token";
const ADMIN = { Authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const TRACE = "0af7651916cd43dd8448eb211c80319c";
const PARENT = "b7ad6b7169203331";

/** A statsd TCP server that keeps every line it receives. */
function statsdListener() {
  const lines: string[] = [];
  let server: TcpServer;
  return {
    lines,
    port: 0,
    async start() {
      server = createTcpServer((socket) => {
        let pending = "";
        socket.setEncoding("utf8");
        socket.on("data", (chunk: string) => {
          pending += chunk;
          const complete = pending.split("\n");
          pending = complete.pop() ?? "";
          lines.push(...complete.filter(Boolean));
        });
        socket.on("end", () => pending && lines.push(pending));
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      this.port = (server.address() as { port: number }).port;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An OTLP/HTTP endpoint that keeps every export it receives. */
function otlpEndpoint() {
  const exports: { path: string; headers: IncomingHttpHeaders; body: any }[] = [];
  let server: HttpServer;
  return {
    exports,
    port: 0,
    async start() {
      server = createHttpServer((request, response) => {
        let text = "";
        request.setEncoding("utf8");
        request.on("data", (chunk: string) => (text += chunk));
        request.on("end", () => {
          exports.push({ path: request.url ?? "", headers: request.headers, body: JSON.parse(text) });
          response.writeHead(200, { "content-type": "application/json" }).end("{}");
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      this.port = (server.address() as { port: number }).port;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Counter lines (`name:value|c[|#tags]`) summed by name and tags; flushes may split a sequence across lines. */
function counterSums(lines: string[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const line of lines) {
    const match = /^(.+):(\d+)\|c(\|#.*)?$/.exec(line);
    if (!match) continue;
    const key = match[1] + (match[3] ?? "");
    sums[key] = (sums[key] ?? 0) + Number(match[2]);
  }
  return sums;
}

/** Polls until `check` passes (flushes happen every second), then returns; fails with the last assertion. */
async function eventually(check: () => void, deadlineMs = 30_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

async function put(server: DevServer, files: Record<string, string>) {
  await refreshProxyConnection(server);
  const response = await fetch(`${server.url}/rlconfig/files`, {
    method: "PUT",
    headers: ADMIN,
    body: JSON.stringify({ files }),
  });
  expect(response.status).toBe(200);
}

async function json(
  server: DevServer,
  domain: string,
  descriptors: [string, string][][],
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${server.url}/json`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      domain,
      descriptors: descriptors.map((pairs) => ({ entries: pairs.map(([key, value]) => ({ key, value })) })),
    }),
  });
  await response.arrayBuffer();
  return response.status;
}

const plainStatsd = statsdListener();
const taggedStatsd = statsdListener();
const otlp = otlpEndpoint();
let plain: DevServer;
let tagged: DevServer;

beforeAll(async () => {
  await Promise.all([plainStatsd.start(), taggedStatsd.start(), otlp.start()]);
  [plain, tagged] = await Promise.all([
    startWranglerDev({
      RATELIMIT_ADMIN_TOKEN: TOKEN,
      STATS_FLUSH_INTERVAL: "1s",
      USE_METRICSD: "true",
      METRICSD_HOST: "127.0.0.1",
      METRICSD_PORT: String(plainStatsd.port),
      EXTRA_TAGS: "env:it",
      TRACING_ENABLED: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlp.port}`,
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20otlp-token",
      TRACING_SERVICE_NAME: "rl-it",
      TRACING_SERVICE_INSTANCE_ID: "it-1",
    }),
    startWranglerDev({
      RATELIMIT_ADMIN_TOKEN: TOKEN,
      STATS_FLUSH_INTERVAL: "1s",
      // The reference's names, as an existing deployment sets them.
      USE_METRICSD: "",
      USE_STATSD: "false",
      USE_DOG_STATSD: "true",
      STATSD_HOST: "127.0.0.1",
      STATSD_PORT: String(taggedStatsd.port),
      DOG_STATSD_MOGRIFIERS: "RULE,SERVER",
      DOG_STATSD_MOGRIFIER_RULE_PATTERN: "^ratelimit\\.service\\.rate_limit\\.(.*)\\.(.*)\\.(.*)$",
      DOG_STATSD_MOGRIFIER_RULE_NAME: "ratelimit.service.rate_limit.$3",
      DOG_STATSD_MOGRIFIER_RULE_TAGS: "domain:$1,descriptor:$2",
      DOG_STATSD_MOGRIFIER_SERVER_PATTERN: "^ratelimit_server\\.(.*)\\.total_requests$",
      DOG_STATSD_MOGRIFIER_SERVER_NAME: "ratelimit.requests",
      DOG_STATSD_MOGRIFIER_SERVER_TAGS: "method:$1",
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([plain?.stop(), tagged?.stop()]);
  await Promise.all([plainStatsd.stop(), taggedStatsd.stop(), otlp.stop()]);
});

describe("statsd over TCP", () => {
  it("pushes exactly the statistics of a known sequence, tags in the names, and /stats agrees", async () => {
    await put(plain, { "it.yaml": STATS_CONFIG("it") });
    const steps = statsSequence("it", "it-unknown");
    const statuses = [];
    for (const step of steps) statuses.push(await json(plain, step.domain, step.descriptors));
    expect(statuses).toEqual(steps.map((step) => (step.code === "OK" ? 200 : 429)));

    // statsd gets each flush's changes: counters that did not move are not sent.
    const expected = Object.fromEntries(
      Object.entries(expectedRuleStats("it", "it-unknown"))
        .filter(([, value]) => value !== 0)
        .map(([name, value]) => [`${name}.__env=it`, value]),
    );
    await eventually(() => {
      const sums = counterSums(plainStatsd.lines);
      expect(
        Object.fromEntries(Object.entries(sums).filter(([name]) => /\.rate_limit\.it(-unknown)?\./.test(name))),
      ).toEqual(expected);
      expect(sums["ratelimit_server.ShouldRateLimit.total_requests.__env=it"]).toBe(steps.length);
      expect(sums["ratelimit.service.config_load_success.__env=it"]).toBe(1);
    });
    const timings = plainStatsd.lines.filter((line) =>
      line.startsWith("ratelimit_server.ShouldRateLimit.response_time.__env=it:"),
    );
    expect(timings).toHaveLength(steps.length);
    for (const line of timings)
      expect(line).toMatch(/^ratelimit_server\.ShouldRateLimit\.response_time\.__env=it:\d+(\.\d+)?\|ms$/);

    const stats = await (await getWithRetry(`${plain.url}/stats`, { headers: ADMIN })).text();
    const fromPage = Object.fromEntries(
      stats
        .trimEnd()
        .split("\n")
        .map((line) => line.split(": "))
        .filter(([name]) => /\.rate_limit\.it(-unknown)?\./.test(name))
        .map(([name, value]) => [name, Number(value)]),
    );
    expect(fromPage).toEqual(
      Object.fromEntries(
        Object.entries(expectedRuleStats("it", "it-unknown")).map(([name, value]) => [`${name}.__env=it`, value]),
      ),
    );
  });

  it("rewrites names into name plus tags with the mogrifiers for tagged statsd", async () => {
    await put(tagged, { "tg.yaml": STATS_CONFIG("tg") });
    for (let i = 0; i < 7; i++) await json(tagged, "tg", [[["near", "a"]]]);
    await json(tagged, "tg", [
      [
        ["route", "draw"],
        ["method", "GET"],
      ],
    ]);
    await eventually(() => {
      const sums = counterSums(taggedStatsd.lines);
      expect(sums["ratelimit.service.rate_limit.total_hits|#domain:tg,descriptor:near"]).toBe(7);
      expect(sums["ratelimit.service.rate_limit.over_limit|#domain:tg,descriptor:near"]).toBe(2);
      expect(sums["ratelimit.service.rate_limit.near_limit|#domain:tg,descriptor:near"]).toBe(1);
      expect(sums["ratelimit.service.rate_limit.within_limit|#domain:tg,descriptor:near"]).toBe(5);
      // (.*) is greedy: with two levels the first group takes `tg.route_draw`, as the reference's regexp does.
      expect(sums["ratelimit.service.rate_limit.total_hits|#domain:tg.route_draw,descriptor:method"]).toBe(1);
      expect(sums["ratelimit.requests|#method:ShouldRateLimit"]).toBe(8);
    });
    expect(taggedStatsd.lines.filter((line) => line.includes("__"))).toEqual([]);
  });
});

describe("OTLP/HTTP traces", () => {
  it("exports the decision's span to the endpoint, joined to the caller's traceparent", async () => {
    await put(plain, {
      "traced.yaml":
        "domain: traced\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: hour\n      requests_per_unit: 5\n",
    });
    expect(await json(plain, "traced", [[["k", "v"]], [["x", "y"]]], { traceparent: `00-${TRACE}-${PARENT}-01` })).toBe(
      200,
    );
    let found: { exported: (typeof otlp.exports)[number]; span: any } | undefined;
    await eventually(() => {
      found = undefined;
      for (const exported of otlp.exports) {
        const span = exported.body.resourceSpans[0].scopeSpans[0].spans.find(
          (s: { traceId: string }) => s.traceId === TRACE,
        );
        if (span) found = { exported, span };
      }
      expect(found).toBeDefined();
    });
    const { exported, span } = found!;
    expect(exported.path).toBe("/v1/traces");
    expect(exported.headers.authorization).toBe("Bearer otlp-token");
    expect(exported.headers["content-type"]).toBe("application/json");
    expect(exported.body.resourceSpans[0].resource.attributes).toEqual([
      { key: "service.name", value: { stringValue: "rl-it" } },
      { key: "service.instance.id", value: { stringValue: "it-1" } },
    ]);
    expect(span).toMatchObject(executionSpan(TRACE, PARENT, "traced", 2, "OK"));
    expect(BigInt(span.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(span.startTimeUnixNano));
  });
});
