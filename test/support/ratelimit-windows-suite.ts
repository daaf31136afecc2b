// The several-windows behaviour (a rule's additional_limits) every store that supports it must show through POST
// /json, written once and run against the Durable Object store (stores/durable-object/windows.test.ts) and the
// key-value store (stores/redis/windows.test.ts). Callers install WINDOWS_CONFIG with atNowWithConfig first.
import { expect, it, vi } from "vitest";
import { descriptor } from "./ratelimit-calls";
import { type Answer, NOW } from "./ratelimit-decision-suite";
import { okStatus, overStatus } from "./ratelimit-statuses";

/** Domain "win": a second's and a minute's window, an hour's and a minute's, a token bucket and a sliding window. */
export const WINDOWS_CONFIG = `
domain: win
descriptors:
  - key: burst
    rate_limit:
      unit: second
      requests_per_unit: 10
    additional_limits:
      - unit: minute
        requests_per_unit: 20
  - key: crowd
    rate_limit:
      unit: hour
      requests_per_unit: 100
    additional_limits:
      - unit: minute
        requests_per_unit: 50
  - key: mixed
    rate_limit:
      name: mixed_rule
      algorithm: token_bucket
      unit: second
      requests_per_unit: 5
    additional_limits:
      - algorithm: sliding_window
        unit: minute
        requests_per_unit: 8
`;

const winRequest = (key: string, value: string) => ({ domain: "win", descriptors: [descriptor([key, value])] });

/** `count` concurrent requests; returns their answers in order. */
const together = (rateLimit: (body: unknown) => Promise<Answer>, body: unknown, count: number) =>
  Promise.all(Array.from({ length: count }, () => rateLimit(body)));

const admitted = (answers: Answer[]) => answers.filter((answer) => answer.status === 200).length;

/**
 * Registers the shared tests. `minuteCount` reads the minute window's stored count of a `burst` value (NOW's minute),
 * from the store itself.
 */
export function windowsSuite(
  rateLimit: (body: unknown) => Promise<Answer>,
  minuteCount: (value: string) => Promise<number>,
): void {
  it("10 per second plus 20 per minute: 10 of a burst of 100, 10 more in the next second, then none that minute", async () => {
    const body = winRequest("burst", "k1");
    try {
      vi.setSystemTime(NOW + 100);
      const first = await together(rateLimit, body, 100);
      expect(admitted(first)).toBe(10);
      // The refused 90 took nothing from the minute's window.
      expect(await minuteCount("k1")).toBe(10);
      // A refusal names the window that refused: the second's.
      expect(first.find((answer) => answer.status === 429)!.body.statuses[0]).toEqual(overStatus(10, "SECOND", "1s"));
      vi.setSystemTime(NOW + 1100);
      expect(admitted(await together(rateLimit, body, 100))).toBe(10);
      expect(await minuteCount("k1")).toBe(20);
      vi.setSystemTime(NOW + 5000);
      const late = await together(rateLimit, body, 10);
      expect(admitted(late)).toBe(0);
      // Now the minute's window refuses, with 25 s left of it; still 20 counted.
      expect(late[0].body).toEqual({ overallCode: "OVER_LIMIT", statuses: [overStatus(20, "MINUTE", "25s")] });
      expect(await minuteCount("k1")).toBe(20);
    } finally {
      vi.setSystemTime(NOW);
    }
  });

  it("reports the window with the fewest remaining while every window has room", async () => {
    const body = winRequest("burst", "k2");
    try {
      vi.setSystemTime(NOW + 100);
      expect((await rateLimit(body)).body.statuses[0]).toEqual(okStatus(10, "SECOND", 9, "1s"));
      for (let second = 1; second <= 2; second++) {
        vi.setSystemTime(NOW + 100 + second * 1000);
        for (let i = 0; i < 7; i++) await rateLimit(body);
      }
      // 15 in the minute: the second's window has 9 left, the minute's 4 after this hit.
      vi.setSystemTime(NOW + 3100);
      expect((await rateLimit(body)).body.statuses[0]).toEqual(okStatus(20, "MINUTE", 4, "27s"));
    } finally {
      vi.setSystemTime(NOW);
    }
  });

  it("600 concurrent hits on 100 per hour plus 50 per minute admit exactly 50", async () => {
    const answers = await together(rateLimit, winRequest("crowd", "c1"), 600);
    expect(admitted(answers)).toBe(50);
    expect((await rateLimit(winRequest("crowd", "c1"))).body.statuses[0]).toEqual(overStatus(50, "MINUTE", "30s"));
  });

  it("combines a token bucket and a sliding window, each refusing in turn, under the rule's name", async () => {
    const body = winRequest("mixed", "m1");
    try {
      vi.setSystemTime(NOW);
      const first = [];
      for (let i = 0; i < 7; i++) first.push(await rateLimit(body));
      expect(first.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 429, 429]);
      expect(first[5].body.statuses[0]).toEqual(overStatus(5, "SECOND", "0.200s", "mixed_rule"));
      // A second later the bucket is full again, but the minute's sliding window has only 3 left.
      vi.setSystemTime(NOW + 1000);
      const second = [];
      for (let i = 0; i < 5; i++) second.push(await rateLimit(body));
      expect(second.map((answer) => answer.status)).toEqual([200, 200, 200, 429, 429]);
      expect(second[3].body.statuses[0]).toMatchObject({
        code: "OVER_LIMIT",
        currentLimit: { requestsPerUnit: 8, unit: "MINUTE", name: "mixed_rule" },
      });
    } finally {
      vi.setSystemTime(NOW);
    }
  });
}
