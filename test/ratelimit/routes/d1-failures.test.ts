// D1 failing under an ordinary request of the rate limit service: the administrator's configuration reads and writes
// and a decision that must read the configuration answer the service's generic 500 (text/plain, as the reference's
// Go server), with none of D1's text; a configuration write D1 fails stores nothing (one batch).
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import worker from "../../../src/index";
import { CONFIG_CHECK_INTERVAL_MS } from "../../../src/ratelimit/config/provider";
import { readConfigState } from "../../../src/ratelimit/config/repo";
import { database } from "../../../src/shared/db";
import { d1FailingOn, MISSING_TABLE, withDb } from "../../support/failing-d1";
import { descriptor, RATELIMIT_ADMIN } from "../../support/ratelimit-calls";

const CONFIG_TABLES = /from "ratelimit_config_(state|files)"/;
const FILE =
  "domain: d1-fail\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: hour\n      requests_per_unit: 5\n";
const LOGIN = { domain: "example", descriptors: [descriptor(["path", "/login"])] };

let logged: MockInstance<typeof console.error>;
beforeEach(() => {
  logged = vi.spyOn(console, "error").mockImplementation(() => {});
  vi.spyOn(console, "log").mockImplementation(() => {});
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

async function send(workerEnv: Env, path: string, init: RequestInit = {}) {
  const response = await worker.fetch(
    new Request(`http://example.com${path}`, init),
    workerEnv,
    createExecutionContext(),
  );
  return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
}

/** The service's generic 500, with none of D1's text; the error logged as the rate limit service's unexpected one. */
function expectGeneric(answer: { status: number; type: string | null; text: string }) {
  expect(answer).toEqual({ status: 500, type: "text/plain; charset=UTF-8", text: "Internal Server Error" });
  const messages = logged.mock.calls.map(([line]) => JSON.parse(String(line))["@message"]);
  expect(messages).toEqual(["ratelimit: unexpected error"]);
  expect(JSON.stringify(logged.mock.calls)).toContain(MISSING_TABLE);
  logged.mockClear();
}

describe("D1 failing under a rate limit request", () => {
  it("answers the administrator's configuration read with the generic 500", async () => {
    const { db } = d1FailingOn(CONFIG_TABLES);
    expectGeneric(await send(withDb(db), "/rlconfig", { headers: RATELIMIT_ADMIN }));
    expectGeneric(await send(withDb(db), "/rlconfig/files", { headers: RATELIMIT_ADMIN }));
  });

  it("answers a configuration write D1 fails with the generic 500, and stores none of it", async () => {
    const before = await readConfigState(database(env.DB));
    // The batch's last statement, the set's new version, fails after the files' delete and inserts.
    const { db, failed } = d1FailingOn(/^insert into "ratelimit_config_state"/);
    const body = JSON.stringify({ files: { "d1-fail.yaml": FILE } });
    const headers = { ...RATELIMIT_ADMIN, "content-type": "application/json" };
    expectGeneric(await send(withDb(db), "/rlconfig/files", { method: "PUT", headers, body }));
    expect(failed).toHaveLength(1);
    expect(await readConfigState(database(env.DB))).toEqual(before);
    const files = await env.DB.prepare("select name from ratelimit_config_files where name = 'd1-fail.yaml'").all();
    expect(files.results).toEqual([]);
  });

  it("answers a decision with the generic 500 when an isolate with no configuration yet cannot read it", async () => {
    const { db } = d1FailingOn(CONFIG_TABLES);
    expectGeneric(await send(withDb(db), "/json", { method: "POST", body: JSON.stringify(LOGIN) }));
  });

  it("decides with the set in force when D1 fails to re-read it, and re-reads it once D1 answers", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const { db, failed, failing, matched } = d1FailingOn(CONFIG_TABLES);
    failing.on = false;
    const workerEnv = withDb(db);
    const decide = () => send(workerEnv, "/json", { method: "POST", body: JSON.stringify(LOGIN) });
    const login = (answer: { text: string }) => JSON.parse(answer.text).statuses[0].currentLimit;
    const first = await decide();
    expect(first.status).toBe(200);
    expect(login(first)).toEqual({ requestsPerUnit: 5, unit: "MINUTE", name: "login" });

    // The view is stale: this request re-reads it, and D1 fails.
    failing.on = true;
    vi.advanceTimersByTime(CONFIG_CHECK_INTERVAL_MS + 1);
    const during = await decide();
    expect(failed.length).toBeGreaterThan(0);
    expect(during.status).toBe(200);
    expect(login(during)).toEqual(login(first));
    const logs = logged.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(logs).toEqual([
      expect.objectContaining({
        "@message": "ratelimit: could not re-read the configuration set; the one in force stays",
      }),
    ]);
    expect(JSON.stringify(logs)).toContain(MISSING_TABLE);
    // Not asked again before another interval: D1 failing costs each isolate one read a second.
    const reads = failed.length;
    expect((await decide()).status).toBe(200);
    expect(failed.length).toBe(reads);

    failing.on = false;
    const asked = matched.count;
    vi.advanceTimersByTime(CONFIG_CHECK_INTERVAL_MS + 1);
    expect((await decide()).status).toBe(200);
    expect(matched.count).toBeGreaterThan(asked);
    expect(logged).toHaveBeenCalledTimes(1);
  });
});
