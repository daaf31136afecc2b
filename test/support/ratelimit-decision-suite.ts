// The decision behaviour every counter store must show through POST /json, written once and run against the
// Durable Object store (test/ratelimit/routes/http.test.ts, stores/durable-object/store.test.ts) and the key-value
// store (stores/redis/store.test.ts). Callers freeze the clock at NOW and install DECISION_CONFIG (plus rules of their
// own) with atNowWithConfig before the suite runs; tests that move the clock put it back at NOW.
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { descriptor, installConfig } from "./ratelimit-calls";
import { okStatus, overStatus } from "./ratelimit-statuses";
import { UNLIMITED_AND_BLOCKED_RULES } from "./ratelimit-rules";

export interface Answer {
  status: number;
  body: any;
  contentType: string | null;
}

/** 2030-01-01T00:00:30Z: 30 s into a minute, 30 s into an hour. */
export const NOW = Date.UTC(2030, 0, 1, 0, 0, 30);

/** Sets up the calling file or describe: the clock frozen at NOW and these configuration files installed first. */
export function atNowWithConfig(files: Record<string, string>): void {
  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: NOW });
    await installConfig(files);
  });
  afterAll(() => vi.useRealTimers());
}

/** A request of domain rl with one single-entry descriptor per `[key, value]`, in order. */
export const rlRequest = (...pairs: [string, string][]) => ({
  domain: "rl",
  descriptors: pairs.map((pair) => descriptor(pair)),
});

/** Rules of domain "rl" the suite relies on; append rules for a store's own tests. */
export const DECISION_CONFIG = `
domain: rl
descriptors:
  - key: client
    rate_limit:
      unit: hour
      requests_per_unit: 3
  - key: path
    value: /login
    rate_limit:
      name: login
      unit: minute
      requests_per_unit: 2
  - key: path
    value: /free
${UNLIMITED_AND_BLOCKED_RULES}
  - key: hot
    rate_limit:
      unit: hour
      requests_per_unit: 100
  - key: wild
    value: api/*
    share_threshold: true
    rate_limit:
      unit: hour
      requests_per_unit: 2
  - key: mid
    value: img/*.png
    rate_limit:
      unit: hour
      requests_per_unit: 4
  - key: mid
    value: img/a*
    rate_limit:
      unit: hour
      requests_per_unit: 6
  - key: stars
    value: /v*/users/*/posts
    rate_limit:
      unit: hour
      requests_per_unit: 7
  - key: stars
    rate_limit:
      unit: hour
      requests_per_unit: 70
  - key: midshare
    value: /api*v1
    share_threshold: true
    rate_limit:
      unit: hour
      requests_per_unit: 2
  - key: plan
    quota_mode: true
    rate_limit:
      unit: hour
      requests_per_unit: 1
  - key: addon
    quota_mode: true
    rate_limit:
      unit: hour
      requests_per_unit: 1
  - key: sliding
    rate_limit:
      algorithm: sliding_window
      unit: minute
      requests_per_unit: 10
  - key: bucket
    rate_limit:
      algorithm: token_bucket
      unit: minute
      requests_per_unit: 40
      burst: 20
  - key: window2m
    rate_limit:
      unit: minute
      unit_multiplier: 2
      requests_per_unit: 3
  - key: window7m
    rate_limit:
      unit: minute
      unit_multiplier: 7
      requests_per_unit: 3
  - key: bucket5m
    rate_limit:
      algorithm: token_bucket
      unit: minute
      unit_multiplier: 5
      requests_per_unit: 5
  - key: crowd_fixed
    rate_limit:
      unit: hour
      requests_per_unit: 120
  - key: crowd_sliding
    rate_limit:
      algorithm: sliding_window
      unit: minute
      requests_per_unit: 100
  - key: crowd_bucket
    rate_limit:
      algorithm: token_bucket
      unit: hour
      requests_per_unit: 100
      burst: 80
`;

export interface DecisionSuiteOptions {
  /** Runs after the key-only rule's test, e.g. to check where the store put that counter. */
  afterKeyOnlyRule?: () => Promise<void>;
}

/** Registers the shared decision tests; `rateLimit` posts a body to /json through the store under test. */
export function decisionSuite(rateLimit: (body: unknown) => Promise<Answer>, options: DecisionSuiteOptions = {}): void {
  it("counts a key-only rule per value and answers 429 once over", async () => {
    const request = rlRequest(["client", "10.0.0.1"]);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await rateLimit(request));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers[0].body).toEqual({
      overallCode: "OK",
      statuses: [okStatus(3, "HOUR", 2, "3570s")],
    });
    expect(answers[2].body.statuses[0]).toEqual(okStatus(3, "HOUR", 0, "3570s"));
    expect(answers[3].body).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [overStatus(3, "HOUR", "3570s")],
    });
    expect(answers[3].contentType).toMatch(/^application\/json/);
    // Another value of the same key has its own counter.
    const other = await rateLimit(rlRequest(["client", "10.0.0.2"]));
    expect(other.body.statuses[0].limitRemaining).toBe(2);
    await options.afterKeyOnlyRule?.();
  });

  it("names the rule in currentLimit and reports the rest of the minute", async () => {
    const answer = await rateLimit(rlRequest(["path", "/login"]));
    expect(answer.body.statuses[0]).toEqual(okStatus(2, "MINUTE", 1, "30s", "login"));
  });

  it("whitelists a key and value without a limit, and gives unknown descriptors OK", async () => {
    const answer = await rateLimit({
      domain: "rl",
      descriptors: [descriptor(["path", "/free"]), descriptor(["nothing", "x"]), { entries: [] }],
    });
    expect(answer).toMatchObject({
      status: 200,
      body: { overallCode: "OK", statuses: [{ code: "OK" }, { code: "OK" }, { code: "OK" }] },
    });
  });

  it("answers unlimited with the largest uint32 and zero with OVER_LIMIT", async () => {
    const answer = await rateLimit(rlRequest(["unlimited", "u"], ["blocked", "b"]));
    expect(answer.status).toBe(429);
    expect(answer.body).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [{ code: "OK", limitRemaining: 4294967295 }, overStatus(0, "DAY", "86370s")],
    });
  });

  it("shares one counter among wildcard values with share_threshold", async () => {
    const first = await rateLimit(rlRequest(["wild", "api/a"]));
    const second = await rateLimit(rlRequest(["wild", "api/b"]));
    const third = await rateLimit(rlRequest(["wild", "api/c"]));
    expect([first.body.statuses[0].limitRemaining, second.body.statuses[0].limitRemaining, third.status]).toEqual([
      1,
      undefined,
      429,
    ]);
  });

  it("answers an unknown domain with OK per descriptor", async () => {
    const answer = await rateLimit({ domain: "nope", descriptors: [descriptor(["a", "b"]), descriptor(["c", "d"])] });
    expect(answer).toEqual({
      status: 200,
      body: { overallCode: "OK", statuses: [{ code: "OK" }, { code: "OK" }] },
      contentType: expect.stringMatching(/^application\/json/),
    });
  });

  it("reads snake_case names, string numbers and enum numbers as proto3 JSON parsers do", async () => {
    const answer = await rateLimit({
      domain: "rl",
      hits_addend: "2",
      descriptors: [{ entries: [{ key: "client", value: "snake" }], limit: { requests_per_unit: "10", unit: 3 } }],
    });
    expect(answer.body.statuses[0]).toEqual(okStatus(10, "HOUR", 8, "3570s"));
  });

  it("admits exactly the limit out of 150 concurrent hits on one key (2000 run in test/integration)", async () => {
    const request = rlRequest(["hot", "one-key"]);
    const statuses = await Promise.all(Array.from({ length: 150 }, () => rateLimit(request).then((a) => a.status)));
    expect(statuses.filter((s) => s === 200).length).toBe(100);
    expect(statuses.filter((s) => s === 429).length).toBe(50);
  }, 60_000);

  /** Runs `send` with the frozen clock moved to `ms`, then freezes it at NOW again. */
  async function at<T>(ms: number, send: () => Promise<T>): Promise<T> {
    vi.setSystemTime(ms);
    try {
      return await send();
    } finally {
      vi.setSystemTime(NOW);
    }
  }

  /** Sends the same request `count` times, one after the other. */
  async function repeat(request: unknown, count: number): Promise<Answer[]> {
    const answers = [];
    for (let i = 0; i < count; i++) answers.push(await rateLimit(request));
    return answers;
  }

  /** A request of domain rl with one descriptor per value of `key`, in order. */
  const valuesOf = (key: string, values: string[]) =>
    rlRequest(...values.map((value): [string, string] => [key, value]));

  const hourly = (requestsPerUnit: number, limitRemaining = 0) =>
    okStatus(requestsPerUnit, "HOUR", limitRemaining, "3570s");

  it("matches a star in the middle with prefix and suffix anchored, the first declared pattern winning", async () => {
    const answer = await rateLimit(
      valuesOf("mid", [
        // Matches img/*.png and img/a*: the first declared wins, however specific the other is.
        "img/a.png",
        "img/a.gif",
        // A star matches zero characters too.
        "img/.png",
        // Anchored at both ends: text after the suffix or before the prefix is no match.
        "img/b.png.bak",
        "x/img/b.png",
      ]),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      overallCode: "OK",
      statuses: [hourly(4, 3), hourly(6, 5), hourly(4, 3), { code: "OK" }, { code: "OK" }],
    });
  });

  it("matches several stars with their segments in order, else falls back to the key-only rule", async () => {
    const answer = await rateLimit(
      valuesOf("stars", ["/v1/users/42/posts", "/v/users//posts", "/v1/posts/users/42", "/v1/users/42/posts/x"]),
    );
    expect(answer.body).toEqual({
      overallCode: "OK",
      statuses: [hourly(7, 6), hourly(7, 6), hourly(70, 69), hourly(70, 69)],
    });
  });

  it("shares one counter among the values a mid-value star matches with share_threshold", async () => {
    const answers = [];
    for (const value of ["/api/a/v1", "/api/b/v1", "/apiv1"])
      answers.push(await rateLimit(valuesOf("midshare", [value])));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
    expect(answers.map((a) => a.body)).toEqual([
      { overallCode: "OK", statuses: [hourly(2, 1)] },
      { overallCode: "OK", statuses: [hourly(2)] },
      { overallCode: "OVER_LIMIT", statuses: [{ ...hourly(2), code: "OVER_LIMIT" }] },
    ]);
    const unmatched = await rateLimit(valuesOf("midshare", ["/api/a/v2"]));
    expect(unmatched.body).toEqual({ overallCode: "OK", statuses: [{ code: "OK" }] });
  });

  it("quota_mode: a lone quota over its limit fails the request; one still under lets it pass", async () => {
    const overQuota = { ...hourly(1), code: "OVER_LIMIT" };
    const alone = await repeat(rlRequest(["plan", "quota-alone"]), 2);
    expect(alone).toEqual([
      { status: 200, body: { overallCode: "OK", statuses: [hourly(1)] }, contentType: expect.any(String) },
      { status: 429, body: { overallCode: "OVER_LIMIT", statuses: [overQuota] }, contentType: expect.any(String) },
    ]);
    // plan is over (from above); addon is a quota still under, so the request passes, plan keeping its status.
    const both = rlRequest(["plan", "quota-alone"], ["addon", "quota-alone"]);
    const passed = await rateLimit(both);
    expect([passed.status, passed.body]).toEqual([200, { overallCode: "OK", statuses: [overQuota, hourly(1)] }]);
    // Now every quota descriptor is over.
    const failed = await rateLimit(both);
    expect([failed.status, failed.body]).toEqual([
      429,
      { overallCode: "OVER_LIMIT", statuses: [overQuota, overQuota] },
    ]);
  });

  it("quota_mode: a descriptor that is not a quota decides as always beside quota descriptors", async () => {
    const blockedOver = overStatus(0, "DAY", "86370s");
    // A failed non-quota descriptor fails the request whatever its quotas say.
    const nonQuotaOver = await rateLimit(rlRequest(["blocked", "quota-mixed"], ["addon", "quota-mixed"]));
    expect([nonQuotaOver.status, nonQuotaOver.body]).toEqual([
      429,
      { overallCode: "OVER_LIMIT", statuses: [blockedOver, hourly(1)] },
    ]);
    // A passing non-quota descriptor does not save a request whose every quota failed.
    await rateLimit(rlRequest(["plan", "quota-mixed"]));
    const quotaOver = await rateLimit(rlRequest(["plan", "quota-mixed"], ["client", "quota-mixed"]));
    expect([quotaOver.status, quotaOver.body]).toEqual([
      429,
      { overallCode: "OVER_LIMIT", statuses: [{ ...hourly(1), code: "OVER_LIMIT" }, hourly(3, 2)] },
    ]);
  });

  it("sliding_window weighs the previous window by the part of it still inside the sliding window", async () => {
    const request = rlRequest(["sliding", "weighted"]);
    // Nine admitted in the previous minute.
    const previous = await at(NOW - 60_000, () => repeat(request, 9));
    expect(previous.map((a) => a.status)).toEqual(Array(9).fill(200));
    // NOW is halfway through its minute: the nine weigh floor(9 × 0.5) = 4, leaving room for 6 of the limit of 10.
    const answers = await repeat(request, 7);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 429]);
    // The estimate next drops when the weighted 4.5 loses its half: 0.5 × 60 s / 9 later.
    const status = { currentLimit: { requestsPerUnit: 10, unit: "MINUTE" }, durationUntilReset: "3.333s" };
    expect(answers[0].body).toEqual({ overallCode: "OK", statuses: [{ code: "OK", ...status, limitRemaining: 5 }] });
    expect(answers[5].body).toEqual({ overallCode: "OK", statuses: [{ code: "OK", ...status }] });
    expect(answers[6].body).toEqual({ overallCode: "OVER_LIMIT", statuses: [{ code: "OVER_LIMIT", ...status }] });
  });

  it("token_bucket admits the burst at once, then refills requests_per_unit per unit", async () => {
    const request = rlRequest(["bucket", "refill"]);
    const currentLimit = { requestsPerUnit: 40, unit: "MINUTE" };
    // 40 a minute: a token every 1.5 s, 20 in the bucket.
    const burst = await repeat(request, 21);
    expect(burst.map((a) => a.status)).toEqual([...Array(20).fill(200), 429]);
    expect(burst[0].body.statuses).toEqual([
      { code: "OK", currentLimit, limitRemaining: 19, durationUntilReset: "1.500s" },
    ]);
    expect(burst[20].body).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [{ code: "OVER_LIMIT", currentLimit, durationUntilReset: "1.500s" }],
    });
    // 5.25 s later three whole tokens are back (3.5 refilled); the next comes 0.75 s after that.
    const refilled = await at(NOW + 5250, () => repeat(request, 6));
    expect(refilled.map((a) => a.status)).toEqual([200, 200, 200, 429, 429, 429]);
    expect(refilled[0].body.statuses).toEqual([
      { code: "OK", currentLimit, limitRemaining: 2, durationUntilReset: "0.750s" },
    ]);
    // Long enough to refill from empty: the bucket holds the burst again, and no more.
    const full = await at(NOW + 40_000, () => repeat(request, 25));
    expect(full.filter((a) => a.status === 200).length).toBe(20);
  });

  it("unit_multiplier makes windows of unit × K aligned to the epoch, with their reset times", async () => {
    const answer = await rateLimit(rlRequest(["window2m", "reset"], ["window7m", "reset"], ["bucket5m", "reset"]));
    // NOW is 30 s into its 2-minute window and 270 s into its 7-minute one; 5 tokens per 5 minutes is one a minute.
    expect(answer.body).toEqual({
      overallCode: "OK",
      statuses: [okStatus(3, "MINUTE", 2, "90s"), okStatus(3, "MINUTE", 2, "150s"), okStatus(5, "MINUTE", 4, "60s")],
    });
    const twoMinutes = rlRequest(["window2m", "reset"]);
    expect((await repeat(twoMinutes, 3)).map((a) => a.status)).toEqual([200, 200, 429]);
    // The next 2-minute window starts 90 s later with a fresh count.
    const next = await at(NOW + 90_000, () => rateLimit(twoMinutes));
    expect(next.body.statuses).toEqual([okStatus(3, "MINUTE", 2, "120s")]);
  });

  it.each([
    ["fixed_window", "crowd_fixed", 120],
    ["sliding_window", "crowd_sliding", 100],
    ["token_bucket", "crowd_bucket", 80],
  ])(
    "admits exactly the limit of 600 concurrent hits on one key with %s",
    async (_algorithm, key, limit) => {
      const request = rlRequest([key, "one-key"]);
      const statuses = await Promise.all(Array.from({ length: 600 }, () => rateLimit(request).then((a) => a.status)));
      expect(statuses.filter((s) => s === 200).length).toBe(limit);
      expect(statuses.filter((s) => s === 429).length).toBe(600 - limit);
    },
    60_000,
  );
}
