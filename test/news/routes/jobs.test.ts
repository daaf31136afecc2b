// GET /news/jobs (issue 28): the news jobs' runs for admins, newest first, paged with page and limit and counted in
// X-Total-Count; other services' runs are not listed; anyone but an admin gets the 401 of a refused token.
import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { SignJWT } from "jose";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { createJobRun, finishJobRun } from "../../../src/jobs/history";
import { claimJobRun } from "../../../src/jobs/run-claims";
import { database } from "../../../src/shared/db";
import { call } from "../../support/worker-http";
import { expectRefused, getJson, JWT_SECRET, PAGING_REFUSALS, REFUSED, signUp } from "../../support/news-api";
import { expectNewsError } from "../../support/news-errors";

const CRON = "*/30 * * * *";
const db = () => database(env.DB);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

beforeEach(async () => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  // Each test lists the runs it makes.
  await env.DB.prepare("DELETE FROM job_runs").run();
});

afterEach(() => {
  vi.restoreAllMocks();
});

interface Run {
  id: number;
  state: string;
  trigger: string;
  warnings: string[];
}

async function page(query: string, token: string) {
  const response = await getJson(`/news/jobs${query}`, token);
  expect(response.status).toBe(200);
  return { total: response.headers.get("X-Total-Count"), runs: (await response.json()) as Run[] };
}

describe("GET /news/jobs", () => {
  it("lists the news runs newest first, each with its state, times, counts and error, and no other service's", async () => {
    const admin = await signUp("jobs-admin-1@example.com", { role: "admin" });
    const started = new Date("2026-11-26T10:00:01.000Z");
    const ended = new Date("2026-11-26T10:00:02.500Z");
    const done = await createJobRun(db(), { kind: "news-ingest", trigger: CRON });
    await claimJobRun(db(), { id: done, now: started, heartbeatTimeoutMs: 60_000 });
    await finishJobRun(db(), {
      id: done,
      now: ended,
      state: "succeeded",
      warnings: ["INFO: guardian: 3 fetched, 3 new, 0 updated, 0 unchanged"],
    });
    await createJobRun(db(), { kind: "gensynchaprx", trigger: "api (admin)" });
    const retrying = await createJobRun(db(), { kind: "news-ingest", trigger: CRON });
    await claimJobRun(db(), { id: retrying, now: started, heartbeatTimeoutMs: 60_000 });
    await finishJobRun(db(), { id: retrying, now: ended, state: "queued", error: "nyt answered HTTP 503" });
    const queued = await createJobRun(db(), { kind: "news-ingest", trigger: CRON });

    const response = await getJson("/news/jobs", admin.token);
    expect(response.status).toBe(200);
    expect(response.headers.get("X-Total-Count")).toBe("3");
    expect(await response.json()).toEqual([
      {
        id: queued,
        kind: "news-ingest",
        state: "queued",
        trigger: CRON,
        attempts: 0,
        createdAt: expect.stringMatching(ISO),
        startedAt: null,
        endedAt: null,
        warnings: [],
        error: null,
      },
      {
        id: retrying,
        kind: "news-ingest",
        state: "queued",
        trigger: CRON,
        attempts: 1,
        createdAt: expect.stringMatching(ISO),
        startedAt: "2026-11-26T10:00:01.000Z",
        endedAt: null,
        warnings: [],
        error: "nyt answered HTTP 503",
      },
      {
        id: done,
        kind: "news-ingest",
        state: "succeeded",
        trigger: CRON,
        attempts: 1,
        createdAt: expect.stringMatching(ISO),
        startedAt: "2026-11-26T10:00:01.000Z",
        endedAt: "2026-11-26T10:00:02.500Z",
        warnings: ["INFO: guardian: 3 fetched, 3 new, 0 updated, 0 unchanged"],
        error: null,
      },
    ]);
  });

  it("pages with page and limit (default 30), keeping the total", async () => {
    const admin = await signUp("jobs-admin-2@example.com", { role: "admin" });
    const ids: number[] = [];
    for (let i = 0; i < 32; i++) ids.push(await createJobRun(db(), { kind: "news-ingest", trigger: CRON }));
    const newestFirst = ids.reverse();
    const idsOf = ({ total, runs }: { total: string | null; runs: Run[] }) => ({
      total,
      ids: runs.map(({ id }) => id),
    });

    expect(idsOf(await page("", admin.token))).toEqual({ total: "32", ids: newestFirst.slice(0, 30) });
    expect(idsOf(await page("?page=2", admin.token))).toEqual({ total: "32", ids: newestFirst.slice(30) });
    expect(idsOf(await page("?limit=5&page=3", admin.token))).toEqual({ total: "32", ids: newestFirst.slice(10, 15) });
    expect(idsOf(await page("?limit=100", admin.token))).toEqual({ total: "32", ids: newestFirst });
    expect(idsOf(await page("?limit=10&page=5", admin.token))).toEqual({ total: "32", ids: [] });
  });

  it.each(PAGING_REFUSALS)("answers 400 naming the parameter for %s", async (query, failure) => {
    const admin = await signUp(`jobs-admin-bad${query.replace(/\W/g, "-")}@example.com`, { role: "admin" });
    const response = await getJson(`/news/jobs${query}`, admin.token);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(failure);
  });

  it("is for admins only: no token, a user's, an expired admin token and the master key get the 401", async () => {
    const admin = await signUp("jobs-admin-3@example.com", { role: "admin" });
    const reader = await signUp("jobs-reader@example.com");
    await createJobRun(db(), { kind: "news-ingest", trigger: CRON });
    const expired = await new SignJWT({ id: admin.user.id, ver: 0 })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 1)
      .sign(new TextEncoder().encode(JWT_SECRET));

    await expectRefused(await call("/news/jobs"), REFUSED.token);
    await expectRefused(await getJson("/news/jobs", reader.token), REFUSED.token);
    await expectRefused(await getJson("/news/jobs", expired), REFUSED.token);
    await expectRefused(await getJson("/news/jobs", "test-master-key"), REFUSED.token);
    expect((await page("", admin.token)).total).toBe("1");
  });

  it("shows the runs the half-hourly cron queued and the consumer ran (NEWS_DEMO)", async () => {
    const admin = await signUp("jobs-admin-4@example.com", { role: "admin" });
    const demo = { ...env, NEWS_DEMO: "true" } as unknown as Env;
    const send = vi.spyOn(env.JOBS, "send").mockResolvedValue(undefined as never);
    await worker.scheduled(createScheduledController({ cron: CRON }), demo, createExecutionContext());
    const messages = send.mock.calls.map(([body]) => body);
    send.mockRestore();
    const batch = createMessageBatch(
      "edge-jobs",
      messages.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body })),
    );
    const ctx = createExecutionContext();
    await worker.queue(batch, demo, ctx);
    await getQueueResult(batch, ctx);

    const { total, runs } = await page("", admin.token);
    expect(total).toBe("3");
    expect(runs.map(({ state, trigger, warnings }) => [state, trigger, warnings[0].replace(/: \d+ .*$/, "")])).toEqual([
      ["succeeded", CRON, "INFO: sample:feed"],
      ["succeeded", CRON, "INFO: sample:nyt"],
      ["succeeded", CRON, "INFO: sample:guardian"],
    ]);
  });
});

describe("GET /news/{id}", () => {
  it("still answers articles: /news/jobs takes only its own path", async () => {
    const reader = await signUp("jobs-article-reader@example.com");
    const unknown = await getJson("/news/jobs-and-more", reader.token);
    await expectNewsError(unknown, 404, "exists", "id", "id names no record");
  });
});
