// The table behind the root's 404 and 405: built from the routes apps registered, with middleware and catch-all
// routes left out, setting paths read per request, and each answer rendered by the owner of the path.
import { Hono, type Context } from "hono";
import { describe, expect, it } from "vitest";
import { HttpError } from "../../../src/shared/http/errors";
import { unmatchedRoute } from "../../../src/shared/http/unmatched-route";

type TestEnv = { Bindings: { METRICS_PATH?: string } };

/** Renders whatever it gets as `<owner> <status> <message>` with the error's headers. */
const renderAs = (owner: string) => (error: Error, c: Context) =>
  c.text(`${owner} ${(error as HttpError).status} ${error.message}`, (error as HttpError).status as 404, {
    ...(error as HttpError).headers,
  });

function worker() {
  const items = new Hono<TestEnv>();
  items.use("/items/*", async (_c, next) => next());
  items.get("/items", (c) => c.text("list"));
  items.post("/items", (c) => c.text("created"));
  items.get("/items/:id", (c) => c.text("one"));
  items.delete("/items/:id", (c) => c.text("deleted"));
  items.on("OPTIONS", "/items", (c) => c.body(null, 204));
  // A handler that passes the request on does not answer it.
  items.put("/items/:id/lock", async (_c, next) => next());

  const stats = new Hono<TestEnv>();
  stats.all("/ping", (c) => c.text("pong"));
  stats.use("/hooked", async (_c, next) => next());
  stats.get("*", async (c, next) => (c.req.path === c.env.METRICS_PATH ? c.text("metrics") : next()));

  const root = new Hono<TestEnv>();
  root.get("/", (c) => c.text("index"));
  root.route("/", items);
  root.route("/", stats);
  root.notFound(
    unmatchedRoute<TestEnv>([
      { routes: items.routes, render: renderAs("items") },
      {
        routes: stats.routes,
        settingRoutes: (env) => (env.METRICS_PATH ? [{ method: "GET", path: env.METRICS_PATH }] : []),
        render: renderAs("stats"),
      },
      { routes: root.routes, render: renderAs("root") },
    ]),
  );
  return root;
}

async function ask(method: string, path: string, env: TestEnv["Bindings"] = {}) {
  const response = await worker().request(path, { method }, env);
  return { status: response.status, allow: response.headers.get("Allow"), body: await response.text() };
}

/** A 404 as the owner answers it: no Allow header, the owner's body. */
const notFound = (body: string) => ({ status: 404, allow: null, body });

/** A 405 as the owner answers it: the path's methods in Allow, the owner's body. */
const notAllowed = (allow: string, body: string) => ({ status: 405, allow, body });

describe("unmatchedRoute", () => {
  it("answers 405 with the path's methods in a fixed order, HEAD with GET, in the owner's shape", async () => {
    expect(await ask("PUT", "/items")).toEqual(
      notAllowed(
        "GET, HEAD, POST, OPTIONS",
        "items 405 method PUT is not allowed on /items; allowed: GET, HEAD, POST, OPTIONS",
      ),
    );
    expect(await ask("POST", "/items/7")).toMatchObject({ status: 405, allow: "GET, HEAD, DELETE" });
    expect(await ask("PATCH", "/")).toEqual(
      notAllowed("GET, HEAD", "root 405 method PATCH is not allowed on /; allowed: GET, HEAD"),
    );
  });

  it("answers 404 where the only matching route is a middleware, a catch-all, or a handler that passed it on", async () => {
    expect(await ask("GET", "/hooked")).toEqual(notFound("stats 404 no route for GET /hooked"));
    expect(await ask("GET", "/items/7/lock")).toEqual(
      notAllowed("PUT", "items 405 method GET is not allowed on /items/7/lock; allowed: PUT"),
    );
    expect(await ask("PUT", "/items/7/lock")).toEqual(notFound("items 404 no route for PUT /items/7/lock"));
  });

  it("gives an unknown path to the owner of its first segment, else to the root", async () => {
    expect(await ask("GET", "/items/7/8/9")).toEqual(notFound("items 404 no route for GET /items/7/8/9"));
    expect(await ask("GET", "/ping/x")).toEqual(notFound("stats 404 no route for GET /ping/x"));
    expect(await ask("DELETE", "/elsewhere")).toEqual(notFound("root 404 no route for DELETE /elsewhere"));
  });

  it("reads the paths that are settings per request", async () => {
    const env = { METRICS_PATH: "/prom/metrics" };
    expect(await ask("GET", "/prom/metrics", env)).toEqual({ status: 200, allow: null, body: "metrics" });
    expect(await ask("POST", "/prom/metrics", env)).toMatchObject({ status: 405, allow: "GET, HEAD" });
    expect(await ask("GET", "/prom/other", env)).toMatchObject({
      status: 404,
      body: "stats 404 no route for GET /prom/other",
    });
    expect(await ask("POST", "/prom/metrics")).toMatchObject({
      status: 404,
      body: "root 404 no route for POST /prom/metrics",
    });
  });
});
