// Issue 28: no news write happens before the settings it needs are known good. A missing JWT_SECRET or a malformed
// setting answers the 500 naming it and leaves nothing behind, so the same request succeeds once the setting is fixed.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../../src/app";
import { database } from "../../../src/shared/db";
import { verifyPassword } from "../../../src/shared/passwords";
import { findUserByEmail, getUser } from "../../../src/news/store/users";
import { basic } from "../../support/worker-http";
import { bearer, MASTER_KEY, signUp } from "../../support/news-api";

const serverError = (message: string) => ({ valid: false, name: "server", param: "request", message });
const NO_JWT_SECRET = serverError("news settings are invalid: JWT_SECRET is not set");
const BAD_EXPIRY = serverError("news settings are invalid: JWT_EXPIRES_IN: expected a duration such as 7d, 12h or 30m");

afterEach(() => {
  vi.restoreAllMocks();
});

/** A request to the Worker's app with `overrides` on its env (a new object: its settings are read afresh). */
function send(
  path: string,
  init: { method: string; body?: unknown; headers?: Record<string, string> },
  overrides = {},
) {
  return app.request(
    path,
    {
      method: init.method,
      headers: { "content-type": "application/json", ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    },
    { ...env, ...overrides },
  );
}

const countArticles = async (source: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM articles WHERE source = ?").bind(source).first<{ n: number }>())!.n;

describe("POST /users without JWT_SECRET", () => {
  it("answers the 500 naming it without creating the user; once it is set the same request answers 201", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const body = { access_token: MASTER_KEY, email: "no-secret-yet@example.com", password: "secret-123" };

    const refused = await send("/users", { method: "POST", body }, { JWT_SECRET: "" });
    expect(refused.status).toBe(500);
    expect(await refused.json()).toEqual(NO_JWT_SECRET);
    expect(await findUserByEmail(database(env.DB), "no-secret-yet@example.com")).toBeUndefined();

    const created = await send("/users", { method: "POST", body });
    expect(created.status).toBe(201);
    const { token, user } = (await created.json()) as { token: string; user: { email: string; id: string } };
    expect(user.email).toBe("no-secret-yet@example.com");
    expect(token.split(".")).toHaveLength(3);
    expect((await findUserByEmail(database(env.DB), "no-secret-yet@example.com"))!.id).toBe(user.id);
  });
});

describe("every other news write with a setting missing or malformed", () => {
  it("answers the 500 naming JWT_SECRET and writes nothing", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const admin = await signUp("no-secret-admin@example.com", { role: "admin" });
    const reader = await signUp("no-secret-reader@example.com", { name: "Reader" });
    const story = { title: "Secretless story", url: "https://desk.example.com/secretless", source: "secretless-desk" };
    const created = await send("/news", { method: "POST", body: story, headers: bearer(admin.token) });
    const { id } = (await created.json()) as { id: number };
    const noSecret = { JWT_SECRET: "" };

    const attempts = [
      send("/news", { method: "POST", body: { ...story, title: "Another" }, headers: bearer(admin.token) }, noSecret),
      send(`/news/${id}`, { method: "PUT", body: { title: "Renamed" }, headers: bearer(admin.token) }, noSecret),
      send(`/news/${id}`, { method: "DELETE", headers: bearer(admin.token) }, noSecret),
      send(
        `/users/${reader.user.id}`,
        { method: "PUT", body: { name: "Renamed" }, headers: bearer(reader.token) },
        noSecret,
      ),
      send(`/users/${reader.user.id}`, { method: "DELETE", headers: bearer(admin.token) }, noSecret),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual(NO_JWT_SECRET);
    }
    expect(await countArticles("secretless-desk")).toBe(1);
    const stored = await env.DB.prepare("SELECT title FROM articles WHERE id = ?").bind(id).first<{ title: string }>();
    expect(stored!.title).toBe("Secretless story");
    expect((await getUser(database(env.DB), reader.user.id))!.name).toBe("Reader");
  });

  it("answers the 500 naming a malformed setting before a password change, which is then not made", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const kim = await signUp("malformed-kim@example.com", { password: "kim-old-secret" });
    const change = (overrides = {}) =>
      send(
        `/users/${kim.user.id}/password`,
        {
          method: "PUT",
          body: { password: "kim-new-secret" },
          headers: { Authorization: basic("malformed-kim@example.com", "kim-old-secret") },
        },
        overrides,
      );

    const refused = await change({ JWT_EXPIRES_IN: "forever" });
    expect(refused.status).toBe(500);
    expect(await refused.json()).toEqual(BAD_EXPIRY);
    const user = (await getUser(database(env.DB), kim.user.id))!;
    expect(await verifyPassword("kim-old-secret", user.passwordHash)).toBe(true);
    expect(user.tokenVersion).toBe(0);

    expect((await change()).status).toBe(200);
  });
});
