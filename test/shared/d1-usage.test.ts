// D1_USAGE_HEADER through the Worker's entry: off (the default) no request carries a Server-Timing header; on, each
// answer carries its own request's D1 work, requests served at once each counting their own; malformed, 500 naming it.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { ADMIN_AUTH, asAdmin, createBackend, createProject } from "../support/proxy-api";

/** A GET as the administrator through the Worker's entry, with these extra variables. */
const get = (path: string, vars: Record<string, string> = {}) =>
  worker.fetch(
    new Request(`http://example.com${path}`, { headers: { Authorization: ADMIN_AUTH } }),
    { ...env, ...vars } as Env,
    createExecutionContext(),
  );
const counted = (path: string) => get(path, { D1_USAGE_HEADER: "true" });

/** The answer's status and Server-Timing header, its body read. */
async function timingOf(response: Response | Promise<Response>) {
  const resolved = await response;
  await resolved.arrayBuffer();
  return { status: resolved.status, timing: resolved.headers.get("Server-Timing") };
}

describe("D1_USAGE_HEADER", () => {
  beforeAll(async () => {
    await createProject("metered");
    await createBackend("metered", { label: "web" });
  });

  it("is off by default: no Server-Timing header", async () => {
    expect(await timingOf(get("/projects"))).toEqual({ status: 200, timing: null });
    expect(await timingOf(asAdmin("/projects/metered"))).toEqual({ status: 200, timing: null });
    expect(await timingOf(get("/projects", { D1_USAGE_HEADER: "false" }))).toEqual({ status: 200, timing: null });
  });

  it("answers GET /projects with its one D1 call (drizzle's select: raw(), so unmetered)", async () => {
    expect(await timingOf(counted("/projects"))).toEqual({
      status: 200,
      timing: 'd1;desc="calls=1 statements=1 rows_written=0 rows_read=0 unmetered=1"',
    });
  });

  it("answers a request without D1 work with zeros", async () => {
    expect(await timingOf(counted("/"))).toEqual({
      status: 200,
      timing: 'd1;desc="calls=0 statements=0 rows_written=0 rows_read=0 unmetered=0"',
    });
  });

  it("counts requests served at once apart", async () => {
    const paths = ["/projects", "/projects/metered", "/", "/domains/metered"];
    const alone = [];
    for (const path of paths) alone.push(await timingOf(counted(path)));
    expect(new Set(alone.map((answer) => answer.timing)).size).toBe(paths.length);
    const together = await Promise.all([...paths, ...paths].map((path) => timingOf(counted(path))));
    expect(together).toEqual([...alone, ...alone]);
  });

  it("answers 500 naming a malformed value, without echoing it, and logs it", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const response = await get("/projects", { D1_USAGE_HEADER: "sometimes" });
      expect(response.status).toBe(500);
      expect(response.headers.get("Server-Timing")).toBeNull();
      const body = (await response.json()) as { error: string };
      expect(body.error).toMatch(/^diagnostics settings are invalid: D1_USAGE_HEADER: /);
      expect(body.error).not.toContain("sometimes");
      expect(logged.mock.calls.map((args) => String(args[0]))).toEqual([
        expect.stringContaining("worker: invalid settings"),
      ]);
    } finally {
      logged.mockRestore();
    }
  });
});
