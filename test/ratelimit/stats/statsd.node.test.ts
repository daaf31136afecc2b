// Statistic names, EXTRA_TAGS, statsd and tagged statsd lines, and the mogrifier rewrites of
// TAGGED_METRICSD_MOGRIFIERS (with the reference's DOG_STATSD aliases).
import { describe, expect, it } from "vitest";
import type { StatEntry } from "../../../src/ratelimit/stats/buffer";
import {
  domainNotFoundName,
  nameWithTags,
  parseExtraTags,
  responseTimeName,
  ruleStatName,
  shouldRateLimitErrorName,
  totalRequestsName,
} from "../../../src/ratelimit/stats/names";
import { mogrify, parseMogrifiers, statsdLines, type Mogrifier } from "../../../src/ratelimit/stats/statsd";

describe("statistic names", () => {
  it("composes the reference's names", () => {
    expect(ruleStatName("d.key_value.sub", "within_limit")).toBe(
      "ratelimit.service.rate_limit.d.key_value.sub.within_limit",
    );
    expect(domainNotFoundName("a:b|c 10.1.2.3")).toBe("ratelimit.service.rate_limit.a_b_c 10_1_2_3.domain_not_found");
    expect(shouldRateLimitErrorName("service")).toBe("ratelimit.service.call.should_rate_limit.service_error");
    expect(shouldRateLimitErrorName("store")).toBe("ratelimit.service.call.should_rate_limit.redis_error");
    expect(totalRequestsName("ShouldRateLimit")).toBe("ratelimit_server.ShouldRateLimit.total_requests");
    expect(responseTimeName("ShouldRateLimit")).toBe("ratelimit_server.ShouldRateLimit.response_time");
  });

  it("parses EXTRA_TAGS in both spellings, sorted by key, and refuses entries without a value", () => {
    expect(parseExtraTags("")).toEqual({ ok: true, value: [] });
    expect(parseExtraTags("zone:eu, <env:prod>,app:rl")).toEqual({
      ok: true,
      value: [
        ["app", "rl"],
        ["env", "prod"],
        ["zone", "eu"],
      ],
    });
    expect(parseExtraTags("env:prod,broken")).toEqual({ ok: false, error: "entry 2 is not key:value" });
    expect(parseExtraTags("env:")).toEqual({ ok: false, error: "entry 1 is not key:value" });
  });

  it("writes tags into plain statsd names as the reference's stats library does", () => {
    expect(
      nameWithTags("ratelimit.service.config_load_success", [
        ["env", "prod.eu"],
        ["svc", "a:b|c"],
      ]),
    ).toBe("ratelimit.service.config_load_success.__env=prod_eu.__svc=a_b_c");
  });
});

const entries: StatEntry[] = [
  { name: "ratelimit.service.rate_limit.mongo_cps.database_users.within_limit", kind: "counter", value: 3 },
  { name: "ratelimit.service.config_load_success", kind: "counter", value: 1 },
  {
    name: "ratelimit_server.ShouldRateLimit.response_time",
    kind: "timer",
    timer: { count: 2, sumMs: 5, buckets: [] },
    samples: [2, 3.25],
  },
];

const EXAMPLE_ENV = {
  TAGGED_METRICSD_MOGRIFIERS: "RULE, SERVER",
  TAGGED_METRICSD_MOGRIFIER_RULE_PATTERN: "^ratelimit\\.service\\.rate_limit\\.(.*)\\.(.*)\\.(.*)$",
  TAGGED_METRICSD_MOGRIFIER_RULE_NAME: "ratelimit.service.rate_limit.$3",
  TAGGED_METRICSD_MOGRIFIER_RULE_TAGS: "domain:$1,descriptor:$2",
  TAGGED_METRICSD_MOGRIFIER_SERVER_PATTERN: "^ratelimit_server\\.(.*)\\.(.*)$",
  TAGGED_METRICSD_MOGRIFIER_SERVER_NAME: "ratelimit_server.$2",
  TAGGED_METRICSD_MOGRIFIER_SERVER_TAGS: "grpc_method:$1",
};

function mogrifiersOf(env: Record<string, unknown>): Mogrifier[] {
  const parsed = parseMogrifiers(env);
  if (!parsed.ok) throw new Error(`${parsed.error.variable}: ${parsed.error.message}`);
  return parsed.value;
}

describe("statsd lines", () => {
  it("sends counters as |c and every timer sample as |ms, with EXTRA_TAGS in the name", () => {
    expect(statsdLines(entries, { tagged: false, mogrifiers: [], extraTags: [["env", "test"]] })).toEqual([
      "ratelimit.service.rate_limit.mongo_cps.database_users.within_limit.__env=test:3|c",
      "ratelimit.service.config_load_success.__env=test:1|c",
      "ratelimit_server.ShouldRateLimit.response_time.__env=test:2|ms",
      "ratelimit_server.ShouldRateLimit.response_time.__env=test:3.25|ms",
    ]);
  });

  it("rewrites names into name plus tags with the first matching mogrifier, EXTRA_TAGS after", () => {
    expect(
      statsdLines(entries, { tagged: true, mogrifiers: mogrifiersOf(EXAMPLE_ENV), extraTags: [["env", "test"]] }),
    ).toEqual([
      "ratelimit.service.rate_limit.within_limit:3|c|#domain:mongo_cps,descriptor:database_users,env:test",
      "ratelimit.service.config_load_success:1|c|#env:test",
      "ratelimit_server.response_time:2|ms|#grpc_method:ShouldRateLimit,env:test",
      "ratelimit_server.response_time:3.25|ms|#grpc_method:ShouldRateLimit,env:test",
    ]);
    expect(statsdLines(entries.slice(1, 2), { tagged: true, mogrifiers: [], extraTags: [] })).toEqual([
      "ratelimit.service.config_load_success:1|c",
    ]);
  });
});

describe("mogrifiers", () => {
  it("keep $n beyond the pattern's groups as written, and $0 is the whole match", () => {
    const [mogrifier] = mogrifiersOf({
      TAGGED_METRICSD_MOGRIFIERS: "M",
      TAGGED_METRICSD_MOGRIFIER_M_PATTERN: "config_(load)_(\\w+)",
      TAGGED_METRICSD_MOGRIFIER_M_NAME: "cfg.$1.$3",
      TAGGED_METRICSD_MOGRIFIER_M_TAGS: "result:$2,whole:$0",
    });
    expect(mogrify("ratelimit.service.config_load_success", [mogrifier])).toEqual({
      name: "cfg.load.$3",
      tags: [
        ["result", "success"],
        ["whole", "config_load_success"],
      ],
    });
    expect(mogrify("ratelimit.other", [mogrifier])).toEqual({ name: "ratelimit.other", tags: [] });
  });

  it("accept the reference's variable names, the spec's winning when both are set", () => {
    const fromAliases = mogrifiersOf({
      USE_DOG_STATSD_MOGRIFIERS: "A",
      DOG_STATSD_MOGRIFIER_A_PATTERN: "^(.*)\\.total_hits$",
      DOG_STATSD_MOGRIFIER_A_NAME: "hits",
      DOG_STATSD_MOGRIFIER_A_TAGS: "key:$1",
    });
    expect(mogrify("x.y.total_hits", fromAliases)).toEqual({ name: "hits", tags: [["key", "x.y"]] });
    const both = mogrifiersOf({
      TAGGED_METRICSD_MOGRIFIERS: "B",
      DOG_STATSD_MOGRIFIERS: "A",
      TAGGED_METRICSD_MOGRIFIER_B_PATTERN: "total_hits",
      DOG_STATSD_MOGRIFIER_B_PATTERN: "never",
      DOG_STATSD_MOGRIFIER_B_NAME: "from-alias",
    });
    expect(both.map((m) => m.name)).toEqual(["B"]);
    expect(mogrify("x.total_hits", both)).toEqual({ name: "from-alias", tags: [] });
  });

  it("refuse a missing pattern or name, a bad regular expression and an empty tag, naming the variable", () => {
    expect(parseMogrifiers({ TAGGED_METRICSD_MOGRIFIERS: "M" })).toEqual({
      ok: false,
      error: { variable: "TAGGED_METRICSD_MOGRIFIER_M_PATTERN", message: "is required" },
    });
    expect(parseMogrifiers({ TAGGED_METRICSD_MOGRIFIERS: "M", TAGGED_METRICSD_MOGRIFIER_M_PATTERN: "x" })).toEqual({
      ok: false,
      error: { variable: "TAGGED_METRICSD_MOGRIFIER_M_NAME", message: "is required" },
    });
    expect(
      parseMogrifiers({
        TAGGED_METRICSD_MOGRIFIERS: "M",
        TAGGED_METRICSD_MOGRIFIER_M_PATTERN: "(",
        TAGGED_METRICSD_MOGRIFIER_M_NAME: "n",
      }),
    ).toEqual({
      ok: false,
      error: { variable: "TAGGED_METRICSD_MOGRIFIER_M_PATTERN", message: "is not a valid regular expression" },
    });
    expect(
      parseMogrifiers({
        TAGGED_METRICSD_MOGRIFIERS: "M",
        DOG_STATSD_MOGRIFIER_M_PATTERN: "x",
        DOG_STATSD_MOGRIFIER_M_NAME: "n",
        DOG_STATSD_MOGRIFIER_M_TAGS: "a:1,b:",
      }),
    ).toEqual({
      ok: false,
      error: { variable: "DOG_STATSD_MOGRIFIER_M_TAGS", message: 'tag "b:" needs a key and a value' },
    });
    expect(parseMogrifiers({})).toEqual({ ok: true, value: [] });
  });
});
