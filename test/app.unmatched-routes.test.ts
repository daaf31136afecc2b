// What the Worker answers a request no route takes: 405 with Allow for a path that exists with other methods, else
// 404, each in the error shape of the service that owns the path (the root's for paths no service owns).
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { ADMIN_AUTH, call } from "./support/worker-http";
import { REFUSED } from "./support/news-api";
import { RATELIMIT_ADMIN } from "./support/ratelimit-calls";

const PROXY = { Authorization: ADMIN_AUTH };
const JSON_TYPE = "application/json";
const TEXT_TYPE = "text/plain; charset=UTF-8";

/** Status, Allow, content type and body of a response, to compare in one assertion. */
async function answer(response: Response) {
  const type = response.headers.get("content-type");
  const text = await response.text();
  return {
    status: response.status,
    allow: response.headers.get("Allow"),
    type,
    body: type?.startsWith(JSON_TYPE) ? JSON.parse(text) : text,
  };
}

const notAllowed = (method: string, path: string, allowed: string) =>
  `method ${method} is not allowed on ${path}; allowed: ${allowed}`;

describe("a wrong method answers 405 with Allow", () => {
  it("in the proxy's shape", async () => {
    expect(await answer(await call("/projects", { method: "PATCH", headers: PROXY }))).toEqual({
      status: 405,
      allow: "GET, HEAD",
      type: JSON_TYPE,
      body: { success: false, payload: notAllowed("PATCH", "/projects", "GET, HEAD"), warnings: [] },
    });
    expect(await answer(await call("/admin/projects/p1", { method: "GET", headers: PROXY }))).toEqual({
      status: 405,
      allow: "DELETE",
      type: JSON_TYPE,
      body: { success: false, payload: notAllowed("GET", "/admin/projects/p1", "DELETE"), warnings: [] },
    });
  });

  it("in the news API's shape", async () => {
    expect(await answer(await call("/users/some-id", { method: "PATCH" }))).toEqual({
      status: 405,
      allow: "GET, HEAD, PUT, DELETE",
      type: JSON_TYPE,
      body: {
        valid: false,
        name: "enum",
        param: "method",
        value: "PATCH",
        enum: ["GET", "HEAD", "PUT", "DELETE"],
        message: notAllowed("PATCH", "/users/some-id", "GET, HEAD, PUT, DELETE"),
      },
    });
  });

  it("in the rate limit service's shape, the metrics page at PULLMETRICS_PATH included", async () => {
    for (const [method, path, allow] of [
      ["POST", "/stats", "GET, HEAD"],
      ["PUT", "/rlconfig", "GET, HEAD"],
      ["POST", "/rlconfig/files", "GET, HEAD, PUT, DELETE"],
      ["DELETE", "/metrics", "GET, HEAD"],
    ]) {
      expect(await answer(await call(path, { method, headers: RATELIMIT_ADMIN })), `${method} ${path}`).toEqual({
        status: 405,
        allow,
        type: TEXT_TYPE,
        body: notAllowed(method, path, allow),
      });
    }
  });

  it("in the root's shape for the root's own paths", async () => {
    expect(await answer(await call("/", { method: "POST" }))).toEqual({
      status: 405,
      allow: "GET, HEAD",
      type: JSON_TYPE,
      body: { error: notAllowed("POST", "/", "GET, HEAD") },
    });
  });

  it("for HEAD and OPTIONS too (neither is served where GET is not)", async () => {
    const head = await call("/auth", { method: "HEAD" });
    expect([head.status, head.headers.get("Allow"), await head.text()]).toEqual([405, "POST", ""]);
    expect(await answer(await call("/search", { method: "OPTIONS" }))).toMatchObject({
      status: 405,
      allow: "GET, HEAD",
    });
  });

  it("leaves the routes that take every method alone", async () => {
    const response = await call("/healthcheck", { method: "PATCH" });
    expect([response.status, await response.text()]).toEqual([200, "OK"]);
  });
});

describe("an unknown path answers 404 in the shape of the service owning its prefix", () => {
  it("the proxy: /test, /projects, /domains, /containers, /backends, /admin, /maintenance, /.well-known", async () => {
    for (const path of ["/projects/p1/extra", "/backends", "/admin/nothing", "/.well-known/other"]) {
      expect(await answer(await call(path, { headers: PROXY })), path).toEqual({
        status: 404,
        allow: null,
        type: JSON_TYPE,
        body: { success: false, payload: `no route for GET ${path}`, warnings: [] },
      });
    }
  });

  it("the news API: /users, /auth, /news, /search", async () => {
    expect(await answer(await call("/news/1/comments", { method: "POST" }))).toEqual({
      status: 404,
      allow: null,
      type: JSON_TYPE,
      body: {
        valid: false,
        name: "route",
        param: "path",
        value: "/news/1/comments",
        message: "no route for POST /news/1/comments",
      },
    });
  });

  it("the rate limit service: /json, /healthcheck, /rlconfig, /debug, /stats, the metrics path, gRPC", async () => {
    for (const path of [
      "/rlconfig/other",
      "/json/x",
      "/metrics/x",
      "/envoy.service.ratelimit.v3.RateLimitService/Other",
    ]) {
      expect(await answer(await call(path, { headers: RATELIMIT_ADMIN })), path).toEqual({
        status: 404,
        allow: null,
        type: TEXT_TYPE,
        body: `no route for GET ${path}`,
      });
    }
  });

  it("a moved metrics page takes its prefix along", async () => {
    const moved = { ...env, PULLMETRICS_PATH: "/prom/metrics" } as Env;
    const fetch = (path: string, method = "GET") =>
      worker.fetch(
        new Request(`http://example.com${path}`, { method, headers: RATELIMIT_ADMIN }),
        moved,
        createExecutionContext(),
      );
    expect(await answer(await fetch("/prom/metrics", "PUT"))).toMatchObject({ status: 405, allow: "GET, HEAD" });
    expect(await answer(await fetch("/prom/other"))).toEqual({
      status: 404,
      allow: null,
      type: TEXT_TYPE,
      body: "no route for GET /prom/other",
    });
  });

  it("the root for any other path", async () => {
    for (const path of ["/nowhere", "/docs/x", "/userz"]) {
      expect(await answer(await call(path, { method: "DELETE" })), path).toEqual({
        status: 404,
        allow: null,
        type: JSON_TYPE,
        body: { error: `no route for DELETE ${path}` },
      });
    }
  });
});

describe("the news API's 401", () => {
  it("has a JSON body in the news shape with the challenge of the route's scheme", async () => {
    for (const [path, method, refusal] of [
      ["/news", "GET", REFUSED.token],
      ["/users", "POST", REFUSED.masterKey],
    ] as const) {
      const response = await call(path, { method });
      expect(response.status, path).toBe(401);
      expect(response.headers.get("WWW-Authenticate")).toBe(refusal.challenge);
      expect(response.headers.get("content-type")).toBe(JSON_TYPE);
      expect(await response.json()).toEqual(refusal.body);
    }
    const login = await call("/auth", { method: "POST", headers: { Authorization: "Bearer test-master-key" } });
    expect(login.status).toBe(401);
    expect(login.headers.get("WWW-Authenticate")).toBe(REFUSED.login.challenge);
    expect(await login.json()).toEqual(REFUSED.login.body);
  });
});
