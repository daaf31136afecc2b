// The decision behaviour every counter store must show through POST /json, written once and run against the
// Durable Object store (json.test.ts) and the key-value store (kvstore.test.ts). Callers freeze the clock at NOW
// and install DECISION_CONFIG (plus rules of their own) before the suite runs.
import { expect, it } from "vitest";
import { descriptor } from "../helpers/ratelimit";

export interface Answer {
  status: number;
  body: any;
  contentType: string | null;
}

/** 2030-01-01T00:00:30Z: 30 s into a minute, 30 s into an hour. */
export const NOW = Date.UTC(2030, 0, 1, 0, 0, 30);

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
  - key: unlimited
    rate_limit:
      unlimited: true
  - key: blocked
    rate_limit:
      unit: day
      requests_per_unit: 0
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
`;

export interface DecisionSuiteOptions {
  /** Runs after the key-only rule's test, e.g. to check where the store put that counter. */
  afterKeyOnlyRule?: () => Promise<void>;
}

/** Registers the shared decision tests; `rateLimit` posts a body to /json through the store under test. */
export function decisionSuite(rateLimit: (body: unknown) => Promise<Answer>, options: DecisionSuiteOptions = {}): void {
  it("counts a key-only rule per value and answers 429 once over", async () => {
    const request = { domain: "rl", descriptors: [descriptor(["client", "10.0.0.1"])] };
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await rateLimit(request));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers[0].body).toEqual({
      overallCode: "OK",
      statuses: [
        {
          code: "OK",
          currentLimit: { requestsPerUnit: 3, unit: "HOUR" },
          limitRemaining: 2,
          durationUntilReset: "3570s",
        },
      ],
    });
    expect(answers[2].body.statuses[0]).toEqual({
      code: "OK",
      currentLimit: { requestsPerUnit: 3, unit: "HOUR" },
      durationUntilReset: "3570s",
    });
    expect(answers[3].body).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [
        { code: "OVER_LIMIT", currentLimit: { requestsPerUnit: 3, unit: "HOUR" }, durationUntilReset: "3570s" },
      ],
    });
    expect(answers[3].contentType).toMatch(/^application\/json/);
    // Another value of the same key has its own counter.
    const other = await rateLimit({ domain: "rl", descriptors: [descriptor(["client", "10.0.0.2"])] });
    expect(other.body.statuses[0].limitRemaining).toBe(2);
    await options.afterKeyOnlyRule?.();
  });

  it("names the rule in currentLimit and reports the rest of the minute", async () => {
    const answer = await rateLimit({ domain: "rl", descriptors: [descriptor(["path", "/login"])] });
    expect(answer.body.statuses[0]).toEqual({
      code: "OK",
      currentLimit: { requestsPerUnit: 2, unit: "MINUTE", name: "login" },
      limitRemaining: 1,
      durationUntilReset: "30s",
    });
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
    const answer = await rateLimit({
      domain: "rl",
      descriptors: [descriptor(["unlimited", "u"]), descriptor(["blocked", "b"])],
    });
    expect(answer.status).toBe(429);
    expect(answer.body).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [
        { code: "OK", limitRemaining: 4294967295 },
        { code: "OVER_LIMIT", currentLimit: { unit: "DAY" }, durationUntilReset: "86370s" },
      ],
    });
  });

  it("shares one counter among wildcard values with share_threshold", async () => {
    const first = await rateLimit({ domain: "rl", descriptors: [descriptor(["wild", "api/a"])] });
    const second = await rateLimit({ domain: "rl", descriptors: [descriptor(["wild", "api/b"])] });
    const third = await rateLimit({ domain: "rl", descriptors: [descriptor(["wild", "api/c"])] });
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
    expect(answer.body.statuses[0]).toEqual({
      code: "OK",
      currentLimit: { requestsPerUnit: 10, unit: "HOUR" },
      limitRemaining: 8,
      durationUntilReset: "3570s",
    });
  });

  it("admits exactly the limit out of 150 concurrent hits on one key (2000 run in test/integration)", async () => {
    const request = { domain: "rl", descriptors: [descriptor(["hot", "one-key"])] };
    const statuses = await Promise.all(Array.from({ length: 150 }, () => rateLimit(request).then((a) => a.status)));
    expect(statuses.filter((s) => s === 200).length).toBe(100);
    expect(statuses.filter((s) => s === 429).length).toBe(50);
  }, 60_000);
}
