// The Prometheus page: the spec's default mapping of the statsd names, checked with a real Prometheus text parser,
// and PULLMETRICS_MAPPER_YAML mappings in statsd_exporter's format (globs, regexes, drops, summaries, buckets).
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { describe, expect, it } from "vitest";
import { emptyTimer, snapshotEntries, TIMER_BOUNDS_MS, type StatsTotals } from "../../../src/ratelimit/stats/buffer";
import {
  DEFAULT_MAPPER_YAML,
  escapeMetricName,
  expandTemplate,
  mapMetric,
  parseMapperConfig,
} from "../../../src/ratelimit/stats/mapper";
import { renderPrometheus } from "../../../src/ratelimit/stats/prometheus";

function timerOf(samplesMs: number[]) {
  const timer = emptyTimer();
  for (const ms of samplesMs) {
    timer.count++;
    timer.sumMs += ms;
    let i = 0;
    while (i < TIMER_BOUNDS_MS.length && ms > TIMER_BOUNDS_MS[i]) i++;
    timer.buckets[i]++;
  }
  return timer;
}

const TOTALS: StatsTotals = {
  counters: {
    "ratelimit.service.config_load_success": 2,
    "ratelimit.service.config_load_error": 1,
    "ratelimit.service.call.should_rate_limit.service_error": 4,
    "ratelimit.service.call.should_rate_limit.redis_error": 1,
    "ratelimit.service.global_shadow_mode": 3,
    "ratelimit_server.ShouldRateLimit.total_requests": 6,
    "ratelimit.service.rate_limit.nowhere.domain_not_found": 2,
  },
  rules: {
    "d.near": [7, 2, 1, 5, 0, 0],
    "d.route_draw.method": [1, 0, 0, 1, 0, 0],
    // Three levels and more fold into key2: these two add up.
    "d.a.b.c": [2, 0, 0, 2, 0, 1],
    "d.a.b.e": [3, 1, 0, 2, 1, 0],
  },
  timers: { "ratelimit_server.ShouldRateLimit.response_time": timerOf([3, 7, 40, 40, 400, 30000]) },
};

type Parsed = {
  name: string;
  help: string;
  type: string;
  metrics: {
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }[];
}[];

function parse(text: string): Record<string, Parsed[number]> {
  return Object.fromEntries((parsePrometheusTextFormat(text) as Parsed).map((family) => [family.name, family]));
}

const render = (yaml: string, totals = TOTALS, tags: [string, string][] = []) =>
  renderPrometheus(snapshotEntries(totals), parseMapperConfig(yaml), tags);

describe("default mapping", () => {
  const families = parse(render(DEFAULT_MAPPER_YAML));

  it("maps per-rule statistics to ratelimit_service_rate_limit_<stat> with domain, key1 and (deeper) key2", () => {
    expect(families.ratelimit_service_rate_limit_total_hits).toEqual({
      name: "ratelimit_service_rate_limit_total_hits",
      help: "Hits on the rule.",
      type: "COUNTER",
      metrics: [
        { labels: { domain: "d", key1: "a", key2: "b" }, value: "5" },
        { labels: { domain: "d", key1: "near" }, value: "7" },
        { labels: { domain: "d", key1: "route_draw", key2: "method" }, value: "1" },
      ],
    });
    expect(families.ratelimit_service_rate_limit_over_limit.metrics).toEqual([
      { labels: { domain: "d", key1: "a", key2: "b" }, value: "1" },
      { labels: { domain: "d", key1: "near" }, value: "2" },
      { labels: { domain: "d", key1: "route_draw", key2: "method" }, value: "0" },
    ]);
    expect(families.ratelimit_service_rate_limit_near_limit.metrics[1]).toEqual({
      labels: { domain: "d", key1: "near" },
      value: "1",
    });
    expect(families.ratelimit_service_rate_limit_within_limit.metrics[1]).toEqual({
      labels: { domain: "d", key1: "near" },
      value: "5",
    });
    expect(families.ratelimit_service_rate_limit_shadow_mode.metrics[0]).toEqual({
      labels: { domain: "d", key1: "a", key2: "b" },
      value: "1",
    });
    expect(families.ratelimit_service_rate_limit_over_limit_with_local_cache.metrics[0]).toEqual({
      labels: { domain: "d", key1: "a", key2: "b" },
      value: "1",
    });
  });

  it("maps the service statistics to the spec's names and labels", () => {
    expect(families.ratelimit_service_should_rate_limit_error.metrics).toEqual([
      { labels: { err_type: "redis_error" }, value: "1" },
      { labels: { err_type: "service_error" }, value: "4" },
    ]);
    expect(families.ratelimit_service_total_requests).toMatchObject({
      type: "COUNTER",
      metrics: [{ labels: { grpc_method: "ShouldRateLimit" }, value: "6" }],
    });
    expect(families.ratelimit_service_config_load_success.metrics).toEqual([{ value: "2" }]);
    expect(families.ratelimit_service_config_load_error.metrics).toEqual([{ value: "1" }]);
    expect(families.ratelimit_service_global_shadow_mode.metrics).toEqual([{ value: "3" }]);
    expect(families.ratelimit_service_rate_limit_domain_not_found.metrics).toEqual([
      { labels: { domain: "nowhere" }, value: "2" },
    ]);
  });

  it("exposes response_time as a histogram in seconds with the Prometheus default buckets", () => {
    // The parser keeps a labelled histogram's buckets but not its labelled _sum and _count: those are read as text.
    expect(families.ratelimit_service_response_time_seconds).toEqual({
      name: "ratelimit_service_response_time_seconds",
      help: "Time the method took to answer.",
      type: "HISTOGRAM",
      metrics: [
        {
          buckets: {
            "0.005": "1",
            "0.01": "2",
            "0.025": "2",
            "0.05": "4",
            "0.1": "4",
            "0.25": "4",
            "0.5": "5",
            "1": "5",
            "2.5": "5",
            "5": "5",
            "10": "5",
            "+Inf": "6",
          },
        },
      ],
    });
    const text = render(DEFAULT_MAPPER_YAML);
    expect(text).toContain(
      'ratelimit_service_response_time_seconds_bucket{grpc_method="ShouldRateLimit",le="0.005"} 1\n',
    );
    expect(text).toContain(
      'ratelimit_service_response_time_seconds_bucket{grpc_method="ShouldRateLimit",le="+Inf"} 6\n',
    );
    expect(text).toContain('ratelimit_service_response_time_seconds_sum{grpc_method="ShouldRateLimit"} 30.49\n');
    expect(text).toContain('ratelimit_service_response_time_seconds_count{grpc_method="ShouldRateLimit"} 6\n');
  });

  it("adds EXTRA_TAGS as labels on every series", () => {
    const tagged = parse(
      render(DEFAULT_MAPPER_YAML, TOTALS, [
        ["env", "prod"],
        ["zone-name", "eu"],
      ]),
    );
    expect(tagged.ratelimit_service_config_load_success.metrics).toEqual([
      { labels: { env: "prod", zone_name: "eu" }, value: "2" },
    ]);
    expect(tagged.ratelimit_service_total_requests.metrics).toEqual([
      { labels: { env: "prod", grpc_method: "ShouldRateLimit", zone_name: "eu" }, value: "6" },
    ]);
  });

  it("escapes label values the text format cannot carry raw", () => {
    const text = render(DEFAULT_MAPPER_YAML, {
      counters: {},
      rules: { 'q.path_/a"b\\c': [1, 0, 0, 1, 0, 0] },
      timers: {},
    });
    expect(text).toContain('ratelimit_service_rate_limit_total_hits{domain="q",key1="path_/a\\"b\\\\c"} 1');
    expect(parse(text).ratelimit_service_rate_limit_total_hits.metrics).toEqual([
      { labels: { domain: "q", key1: 'path_/a"b\\c' }, value: "1" },
    ]);
  });

  it("answers nothing for no statistics", () => {
    expect(render(DEFAULT_MAPPER_YAML, { counters: {}, rules: {}, timers: {} })).toBe("");
  });
});

describe("PULLMETRICS_MAPPER_YAML", () => {
  const CUSTOM = `
defaults:
  observer_type: summary
mappings:
  - match: "ratelimit.service.rate_limit.*.*.total_hits"
    name: "rl_hits"
    labels:
      rule: "$1/$2"
  - match: 'ratelimit\\.service\\.rate_limit\\.[^.]+\\.a\\.(.*)\\.total_hits$'
    match_type: regex
    name: "rl_deep_\${1}_hits"
  - match: '^ratelimit\\.service\\.rate_limit\\.'
    match_type: regex
    action: drop
  - match: "ratelimit_server.*.response_time"
    name: "rl_latency_ms"
    scale: 1
    histogram_options:
      buckets: [5, 50]
    observer_type: histogram
  - match: "ratelimit.service.call.should_rate_limit.*"
    match_metric_type: observer
    name: "never_used"
  - match: "ratelimit_server.*.total_requests"
    name: "rl_calls"
    help: "Calls."
    ttl: 10m
`;

  it("replaces the default mapping: globs, regexes with named templates, drops, scale, buckets, type filters", () => {
    const families = parse(render(CUSTOM));
    expect(Object.keys(families).sort()).toEqual([
      "ratelimit_service_call_should_rate_limit_redis_error",
      "ratelimit_service_call_should_rate_limit_service_error",
      "ratelimit_service_config_load_error",
      "ratelimit_service_config_load_success",
      "ratelimit_service_global_shadow_mode",
      "rl_calls",
      "rl_deep_b_c_hits",
      "rl_deep_b_e_hits",
      "rl_hits",
      "rl_latency_ms",
    ]);
    // A glob's * stays within one component: the two-level route_draw.method falls through to the drop.
    expect(families.rl_hits.metrics).toEqual([{ labels: { rule: "d/near" }, value: "7" }]);
    expect(families.rl_deep_b_c_hits.metrics).toEqual([{ value: "2" }]);
    expect(families.rl_calls).toEqual({ name: "rl_calls", help: "Calls.", type: "COUNTER", metrics: [{ value: "6" }] });
    expect(families.rl_latency_ms.metrics).toEqual([
      { buckets: { "5": "1", "50": "4", "+Inf": "6" }, count: "6", sum: "30490" },
    ]);
    // Unmapped statistics keep statsd_exporter's escaped names.
    expect(families.ratelimit_service_call_should_rate_limit_service_error.metrics).toEqual([{ value: "4" }]);
  });

  it("renders timers as summaries (sum and count) when the mapping says so", () => {
    const text = render("mappings: []", { counters: {}, rules: {}, timers: TOTALS.timers });
    expect(text).toBe(
      [
        "# HELP ratelimit_server_ShouldRateLimit_response_time Rate limit service statistic.",
        "# TYPE ratelimit_server_ShouldRateLimit_response_time summary",
        "ratelimit_server_ShouldRateLimit_response_time_sum 30.49",
        "ratelimit_server_ShouldRateLimit_response_time_count 6",
        "",
      ].join("\n"),
    );
    expect(parse(text).ratelimit_server_ShouldRateLimit_response_time.type).toBe("SUMMARY");
  });

  it("refuses malformed mappings with a message that says where", () => {
    const error = (yaml: string) => {
      try {
        parseMapperConfig(yaml);
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error("accepted");
    };
    expect(error("mappings: [{name: x}]")).toBe("mappings[0]: match is required");
    expect(error("mappings: [{match: a.b}]")).toBe("mappings[0]: name is required");
    expect(error("mappings: [{match: a.b, name: 'bad-name'}]")).toBe(
      'mappings[0]: "bad-name" is not a valid metric name',
    );
    expect(error("mappings: [{match: a.b, name: ok, labels: {'bad-label': x}}]")).toBe(
      'mappings[0]: "bad-label" is not a valid label name',
    );
    expect(error("mappings: [{match: '(', match_type: regex, name: ok}]")).toBe(
      "mappings[0]: match is not a valid regular expression",
    );
    expect(error("mappings: [{match: a, name: ok, observer_type: gauge}]")).toBe(
      "mappings[0]: observer_type must be histogram or summary",
    );
    expect(error("mappings: [{match: a, name: ok, buckets: [1, x]}]")).toBe(
      "mappings[0]: buckets must be a list of numbers",
    );
    expect(error("mappings: [{match: a, name: ok, nmae: typo}]")).toBe('mappings[0]: unknown field "nmae"');
    expect(error("mapings: []")).toBe('unknown field "mapings"');
    expect(error("mappings: {a: 1}")).toBe("mappings must be a list");
    expect(error("mappings: [")).toMatch(/^not valid YAML: /);
  });
});

describe("mapping helpers", () => {
  it("expand templates as Go's regexp does", () => {
    const groups = /(?<first>a)(b)/.exec("ab")!;
    expect(expandTemplate("$1-${2}-${first}-$$-$9-$1x", groups)).toBe("a-b-a-$--");
  });

  it("escape unmapped names as statsd_exporter does", () => {
    expect(escapeMetricName("ratelimit.service.rate_limit.d.path_/x*.total_hits")).toBe(
      "ratelimit_service_rate_limit_d_path__x__total_hits",
    );
    expect(escapeMetricName("9lives")).toBe("_9lives");
  });

  it("keeps the first matching mapping, so over_limit_with_local_cache never lands in over_limit", () => {
    const config = parseMapperConfig(DEFAULT_MAPPER_YAML);
    expect(mapMetric(config, "ratelimit.service.rate_limit.d.a.b.over_limit_with_local_cache", "counter")?.name).toBe(
      "ratelimit_service_rate_limit_over_limit_with_local_cache",
    );
    expect(mapMetric(config, "ratelimit.service.rate_limit.d.a.b.over_limit", "counter")?.name).toBe(
      "ratelimit_service_rate_limit_over_limit",
    );
  });
});
