// POST /json?explain=true through the real Worker and Durable Objects: the usual response plus, per descriptor, the
// rule path that matched (or none, and why), its statistics key, each window's usage before and after, the algorithm,
// shadow and quota mode, replaces, and whether the local cache answered; 401 without the admin bearer.
import { describe, expect, it } from "vitest";
import { RATELIMIT_ADMIN } from "../../support/ratelimit-calls";
import { atNowWithConfig } from "../../support/ratelimit-decision-suite";
import { workerWith } from "../../support/ratelimit-stores";

const CONFIG = `
domain: ex
descriptors:
  - key: user
    rate_limit:
      name: per_user
      unit: minute
      requests_per_unit: 2
    additional_limits:
      - algorithm: sliding_window
        unit: hour
        requests_per_unit: 100
  - key: free
    rate_limit:
      unlimited: true
  - key: shadowed
    shadow_mode: true
    rate_limit:
      unit: hour
      requests_per_unit: 1
      replaces:
        - name: per_user
`;

const worker = workerWith({ CACHE_KEY_PREFIX: "ex_", LOCAL_CACHE_SIZE_IN_BYTES: "1048576" });
const body = (...descriptors: [string, string][][]) => ({
  domain: "ex",
  descriptors: descriptors.map((pairs) => ({ entries: pairs.map(([key, value]) => ({ key, value })) })),
});
const explain = (request: unknown, headers: Record<string, string> = RATELIMIT_ADMIN, query = "?explain=true") =>
  worker.fetch(`/json${query}`, { method: "POST", headers, body: JSON.stringify(request) });

atNowWithConfig({ "ex.yaml": CONFIG });

describe("POST /json?explain=true", () => {
  it("answers 401 without the bearer or with a wrong one, and nothing extra without the parameter", async () => {
    const request = body([["user", "anon"]]);
    expect(await explain(request, {})).toMatchObject({
      status: 401,
      body: "unauthorized: explain=true needs Authorization: Bearer <RATELIMIT_ADMIN_TOKEN>",
    });
    expect((await explain(request, { Authorization: "Bearer nope" })).status).toBe(401);
    for (const query of ["", "?explain=false"]) {
      const plain = await explain(request, {}, query);
      expect(plain.status).toBe(200);
      expect(plain.body).not.toHaveProperty("explain");
    }
  });

  it("names the matched rule with each window's counts, an unmatched descriptor and an unlimited one", async () => {
    await explain(body([["user", "u1"]]));
    const answer = await explain(body([["user", "u1"]], [["nothing", "x"]], [["free", "f"]]));
    expect(answer.status).toBe(200);
    expect(answer.body.statuses).toHaveLength(3);
    expect(answer.body.explain).toEqual([
      {
        index: 0,
        entries: ["user=u1"],
        rule: "ex.user",
        name: "per_user",
        statsKey: "ex.user",
        unlimited: false,
        shadowMode: false,
        quotaMode: false,
        replaces: [],
        replaced: false,
        localCache: false,
        windows: [
          {
            statsKey: "ex.user",
            unit: "MINUTE",
            unitMultiplier: 1,
            requestsPerUnit: 2,
            algorithm: "fixed_window",
            before: 1,
            after: 2,
          },
          {
            statsKey: "ex.user.window_1",
            unit: "HOUR",
            unitMultiplier: 1,
            requestsPerUnit: 100,
            algorithm: "sliding_window",
            before: 1,
            after: 2,
          },
        ],
      },
      { index: 1, entries: ["nothing=x"], rule: null, reason: "no rule matches these entries at this depth" },
      {
        index: 2,
        entries: ["free=f"],
        rule: "ex.free",
        statsKey: "ex.free",
        unlimited: true,
        shadowMode: false,
        quotaMode: false,
        replaces: [],
        replaced: false,
        localCache: false,
      },
    ]);
  });

  it("shows a replaced rule, shadow mode, the local cache answering, and an unknown domain", async () => {
    const replaced = await explain(body([["user", "u2"]], [["shadowed", "s"]]));
    expect(replaced.body.explain[0]).toMatchObject({ rule: "ex.user", replaced: true });
    expect(replaced.body.explain[1]).toMatchObject({ rule: "ex.shadowed", shadowMode: true, replaces: ["per_user"] });
    for (let i = 0; i < 2; i++) await explain(body([["user", "u3"]]));
    await explain(body([["user", "u3"]])); // over: the minute's key is now in the local cache
    const cached = await explain(body([["user", "u3"]]));
    expect(cached.status).toBe(429);
    expect(cached.body.explain[0]).toMatchObject({ localCache: true });
    expect(cached.body.explain[0].windows[0]).not.toHaveProperty("before");
    const unknown = await explain({ domain: "nowhere", descriptors: [{ entries: [{ key: "k", value: "v" }] }] });
    expect(unknown.body.explain).toEqual([
      { index: 0, entries: ["k=v"], rule: null, reason: "domain 'nowhere' is not configured" },
    ]);
  });
});
