// D1 failing under an ordinary request of the proxy API: the caller, administrator or tenant, gets the generic 500
// body with none of D1's text (the error is logged), and a write D1 fails leaves nothing behind: its rows and its
// audit record are one batch, as are a started job's run and its audit record.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { app } from "../../../src/app";
import { CONFIG_LOCK } from "../../../src/proxy/jobs";
import { d1FailingOn, MISSING_TABLE, withDb } from "../../support/failing-d1";
import { ADMIN_AUTH, createApiUser, createHost, createProject, errorBody } from "../../support/proxy-api";
import { silenceConsoleAndRestoreMocks } from "../../support/silent-console";

const GENERIC = errorBody("Internal Server Error");

let tenant: string;
beforeAll(async () => {
  await createHost("d1.hosts.example", "2001:db8::d100");
  await createProject("d1fail");
  tenant = await createApiUser("d1tenant", ["d1fail"]);
});

silenceConsoleAndRestoreMocks();

/** A request through the proxy's app with `db` as D1; the answer's status, body text, and what was logged. */
async function request(db: D1Database, path: string, auth: string, body?: unknown) {
  const init = body === undefined ? {} : { method: "POST", body: JSON.stringify(body) };
  const headers = { Authorization: auth, "content-type": "application/json" };
  const response = await app.request(path, { ...init, headers }, withDb(db));
  return { status: response.status, text: await response.text() };
}

/**
 * The generic 500 for `answer`, with none of D1's text, and the failed `query` logged (once) as the proxy's
 * unexpected error.
 */
async function expectGeneric(answer: Promise<{ status: number; text: string }>, query: RegExp) {
  const errors = vi.spyOn(console, "error").mockImplementation(() => {});
  const { status, text } = await answer;
  expect(status).toBe(500);
  expect(JSON.parse(text)).toEqual(GENERIC);
  expect(text).not.toMatch(new RegExp(`D1|SQLITE|${MISSING_TABLE}`));
  const logged = errors.mock.calls.map(([line]) => JSON.parse(String(line)));
  errors.mockClear();
  expect(logged).toEqual([
    expect.objectContaining({
      "@message": "proxy: unexpected error",
      // drizzle's wrapper names the statement as the code wrote it; D1's own error is its cause.
      error: expect.objectContaining({ message: expect.stringMatching(query) }),
    }),
  ]);
  expect(JSON.stringify(logged)).toContain(`no such table: ${MISSING_TABLE}`);
}

const containersOf = async (project: string) =>
  (
    await env.DB.prepare(
      "select c.label from containers c join projects p on p.id = c.project_id where p.label = ? order by c.label",
    )
      .bind(project)
      .all<{ label: string }>()
  ).results.map((row) => row.label);

describe("D1 failing under a proxy request", () => {
  it("answers a read of the administrator and of a tenant with the generic 500", async () => {
    const { db, failed } = d1FailingOn(/from "projects"/);
    const read = /^Failed query: select .* from "projects"/;
    await expectGeneric(request(db, "/admin/projects", ADMIN_AUTH), read);
    await expectGeneric(request(db, "/projects/d1fail", tenant), read);
    expect(failed.length).toBeGreaterThanOrEqual(2);
  });

  it("answers a write whose audit record fails with the generic 500, and writes nothing", async () => {
    const { db, failed } = d1FailingOn(/^\s*insert into audit_log/i);
    const body = { label: "web", hostname: "d1.hosts.example", ipv6: "2001:db8::d101" };
    const auditRows = () => env.DB.prepare("select count(*) as n from audit_log").first<{ n: number }>();
    const audited = await auditRows();
    const audit = new RegExp(`^D1_ERROR: no such table: ${MISSING_TABLE}: SQLITE_ERROR$`);
    await expectGeneric(request(db, "/containers/d1fail", tenant, body), audit);
    expect(failed).toHaveLength(1);
    // The container's insert ran first in the same batch: D1 rolled it back with the audit record.
    expect(await containersOf("d1fail")).toEqual([]);
    expect(await auditRows()).toEqual(audited);

    await expectGeneric(request(db, "/admin/projects", ADMIN_AUTH, { label: "d1never" }), audit);
    expect((await env.DB.prepare("select id from projects where label = 'd1never'").all()).results).toEqual([]);

    // The same write with D1 working is stored.
    expect((await request(env.DB, "/containers/d1fail", tenant, body)).status).toBe(200);
    expect(await containersOf("d1fail")).toEqual(["web"]);
  });

  it("queues no job whose audit record fails: no run, no message, the lock free; with D1 working, all three", async () => {
    const send = vi.spyOn(env.JOBS, "send").mockResolvedValue(undefined as never);
    const { db, failed } = d1FailingOn(/^\s*insert into audit_log/i);
    const runs = async () => (await env.DB.prepare("select count(*) as n from job_runs").first<{ n: number }>())!.n;
    const runsBefore = await runs();
    const audit = new RegExp(`^D1_ERROR: no such table: ${MISSING_TABLE}: SQLITE_ERROR$`);
    await expectGeneric(request(db, "/admin/writesshprx", ADMIN_AUTH), audit);
    expect(failed).toHaveLength(1);
    expect(await runs()).toBe(runsBefore);
    expect(send).not.toHaveBeenCalled();

    // The lock went with the refused start: the same call with D1 working answers 200 at once.
    const response = await app.request("/admin/writesshprx", { headers: { Authorization: ADMIN_AUTH } }, env);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
    const runId = Number(response.headers.get("X-Job-Id"));
    expect(send.mock.calls).toEqual([[{ kind: "writesshprx", lockHolder: expect.any(String), runId }]]);
    expect(await runs()).toBe(runsBefore + 1);
    const run = await env.DB.prepare("select kind, state, trigger from job_runs where id = ?").bind(runId).first();
    expect(run).toEqual({ kind: "writesshprx", state: "queued", trigger: "api (admin)" });
    const entry = await env.DB.prepare(
      "select actor, path, status, summary from audit_log order by id desc limit 1",
    ).first();
    expect(entry).toEqual({
      actor: "admin",
      path: "/admin/writesshprx",
      status: 200,
      summary: JSON.stringify({ kind: "writesshprx", runId }),
    });
    const { lockHolder } = send.mock.calls[0][0] as { lockHolder: string };
    await env.JOB_LOCK.get(env.JOB_LOCK.idFromName("proxy-jobs")).release(CONFIG_LOCK, lockHolder);
  });
});
