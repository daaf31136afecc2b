// The news API's central error handling: 500s that leak nothing, broken settings, 405 and 404 in the news shape.
import { env } from "cloudflare:workers";
import { decodeJwt } from "jose";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { app } from "../../src/app";
import { call, callJson } from "../support/worker-http";
import { bearer, MASTER_KEY, signUp } from "../support/news-api";
import { d1FailingOn, MISSING_TABLE, withDb } from "../support/failing-d1";

const serverError = (message: string) => ({ valid: false, name: "server", param: "request", message });
const SERVER_ERROR = serverError("Server error");

let token: string;
beforeAll(async () => {
  token = (await signUp("errors@example.com")).token;
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the news API's central error handling", () => {
  it("answers anything unexpected with the generic 500 body and logs it, never leaking its text", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const brokenDb = {
      prepare() {
        throw new Error("D1_ERROR: disk I/O error at /secret/path");
      },
    };
    const response = await app.request("/news", { headers: bearer(token) }, { ...env, DB: brokenDb });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual(SERVER_ERROR);
    expect(text).not.toContain("secret");
    expect(logged).toHaveBeenCalledTimes(1);
    expect(JSON.parse(String(logged.mock.calls[0][0]))).toMatchObject({
      level: "error",
      "@message": "news: unexpected error",
      error: { message: "D1_ERROR: disk I/O error at /secret/path" },
    });
  });

  it("answers a write D1 fails with the generic 500, and stores none of it", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const nameOfMe = async () =>
      ((await (await app.request("/users/me", { headers: bearer(token) }, env)).json()) as { name: string }).name;
    const name = await nameOfMe();
    const admin = (await signUp("errors-admin@example.com", { role: "admin" })).token;
    const story = { title: "A story D1 refused", url: "https://desk.example.com/d1", source: "desk", abstract: "BHP" };
    // The batch's last statement fails after the article's insert: D1 rolls the whole batch back.
    const tombstones = d1FailingOn(/^delete from "news_article_tombstones"/);
    const write = (db: D1Database, path: string, method: string, body: unknown, auth: string) =>
      app.request(
        path,
        { method, headers: { ...bearer(auth), "content-type": "application/json" }, body: JSON.stringify(body) },
        withDb(db),
      );
    for (const response of [
      await write(tombstones.db, "/news", "POST", story, admin),
      await write(d1FailingOn(/^update "news_users"/).db, "/users/me", "PUT", { name: "Never Stored" }, token),
    ]) {
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual(SERVER_ERROR);
      expect(text).not.toMatch(new RegExp(`D1|SQLITE|${MISSING_TABLE}`));
    }
    expect(tombstones.failed).toHaveLength(1);
    expect(logged.mock.calls.map(([line]) => JSON.parse(String(line))["@message"])).toEqual([
      "news: unexpected error",
      "news: unexpected error",
    ]);
    for (const [line] of logged.mock.calls) expect(String(line)).toContain(`no such table: ${MISSING_TABLE}`);
    const stored = await env.DB.prepare("select id from articles where title = ?").bind(story.title).all();
    expect(stored.results).toEqual([]);
    const links = await env.DB.prepare(
      "select count(*) as n from article_companies where article_id not in (select id from articles)",
    ).first<{ n: number }>();
    expect(links).toEqual({ n: 0 });
    expect(await nameOfMe()).toBe(name);
  });

  it("answers 500 naming a missing secret (never its value)", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const noSecret = await app.request("/users/me", { headers: bearer(token) }, { ...env, JWT_SECRET: "" });
    expect(noSecret.status).toBe(500);
    expect(await noSecret.json()).toEqual(serverError("news settings are invalid: JWT_SECRET is not set"));
    const noMaster = await app.request(
      "/users",
      { method: "POST", headers: bearer("anything") },
      { ...env, MASTER_KEY: "" },
    );
    expect(noMaster.status).toBe(500);
    expect(await noMaster.json()).toEqual(serverError("news settings are invalid: MASTER_KEY is not set"));
  });

  it("answers 500 naming a malformed setting", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const response = await app.request("/users/me", { headers: bearer(token) }, { ...env, JWT_EXPIRES_IN: "forever" });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual(
      serverError("news settings are invalid: JWT_EXPIRES_IN: expected a duration such as 7d, 12h or 30m"),
    );
  });

  it("signs tokens that live JWT_EXPIRES_IN", async () => {
    const response = await app.request(
      "/users",
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ access_token: MASTER_KEY, email: "short-lived@example.com", password: "123456" }),
      },
      { ...env, JWT_EXPIRES_IN: "12h" },
    );
    expect(response.status).toBe(201);
    const claims = decodeJwt(((await response.json()) as { token: string }).token);
    expect(claims.exp! - claims.iat!).toBe(12 * 3600);
  });

  it("answers a wrong method with 405, Allow and the validation shape", async () => {
    for (const [method, path, allowed] of [
      ["PATCH", "/news/1", ["GET", "HEAD", "PUT", "DELETE"]],
      ["PUT", "/news", ["GET", "HEAD", "POST"]],
      ["DELETE", "/news", ["GET", "HEAD", "POST"]],
      ["POST", "/search", ["GET", "HEAD"]],
      ["GET", "/auth", ["POST"]],
      ["POST", "/users/me", ["GET", "HEAD", "PUT", "DELETE"]],
    ] as const) {
      const response =
        method === "GET"
          ? await call(path, { headers: bearer(token) })
          : await callJson(path, method, {}, bearer(token));
      const message = `method ${method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`;
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.get("Allow")).toBe(allowed.join(", "));
      expect(await response.json()).toEqual({
        valid: false,
        name: "enum",
        param: "method",
        value: method,
        enum: allowed,
        message,
      });
    }
  });

  it("answers an unknown path under its prefixes with 404 in the validation shape", async () => {
    for (const path of ["/news/1/comments", "/users/me/avatar", "/auth/refresh", "/search/x"]) {
      const response = await call(path, { headers: bearer(token) });
      expect(response.status, path).toBe(404);
      expect(await response.json()).toEqual({
        valid: false,
        name: "route",
        param: "path",
        value: path,
        message: `no route for GET ${path}`,
      });
    }
    // Another first segment is no route of the news API: the root answers it.
    const elsewhere = await call("/userz");
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toEqual({ error: "no route for GET /userz" });
  });
});
