// The admin bearer of the rate limit service refused exactly on the dry runs, the statistics pages and the Prometheus
// page: without RATELIMIT_ADMIN_TOKEN's bearer (none, a wrong one, the token sent any other way) 401 with the Bearer
// challenge of realm ratelimit; with no token configured the routes do not exist, 404 as the reference's Go server.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../../src/index";
import { basic } from "../../support/worker-http";
import { RATELIMIT_ADMIN } from "../../support/ratelimit-calls";

const TOKEN = "test-ratelimit-admin-token";
const UNAUTHORIZED = "unauthorized: send Authorization: Bearer <RATELIMIT_ADMIN_TOKEN>";
const TEXT = "text/plain; charset=UTF-8";
const RULE =
  "domain: refused\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: hour\n      requests_per_unit: 5\n";

/** Method, path, body and content type of each admin route; the Prometheus page at its default path and another. */
const routes: [string, string, string?, string?][] = [
  ["POST", "/rlconfig/validate", JSON.stringify({ files: { "refused.yaml": RULE } }), "application/json"],
  ["POST", "/rlconfig/validate/refused.yaml", RULE, "application/yaml"],
  ["GET", "/stats"],
  ["GET", "/debug"],
  ["GET", "/metrics"],
  ["GET", "/prom"],
];

/** Authorization headers that do not carry the admin bearer. */
const refused: [string, string | undefined][] = [
  ["no Authorization", undefined],
  ["a wrong bearer", "Bearer nope"],
  ["a bearer the token starts", `Bearer ${TOKEN}-and-more`],
  ["the token without a scheme", TOKEN],
  ["the token as a Basic password", basic("admin", TOKEN)],
];

/** A call to the Worker with extra or changed variables (settings are parsed per env object); /prom serves metrics. */
function send(vars: Record<string, string>, [method, path, body, type]: (typeof routes)[number], auth?: string) {
  const headers: Record<string, string> = { ...(auth !== undefined && { Authorization: auth }) };
  if (type !== undefined) headers["content-type"] = type;
  const serviceEnv = { ...env, ...(path === "/prom" && { PULLMETRICS_PATH: "/prom" }), ...vars } as Env;
  return worker.fetch(
    new Request(`http://example.com${path}`, { method, headers, body }),
    serviceEnv,
    createExecutionContext(),
  );
}

describe("the admin routes' bearer", () => {
  for (const route of routes) {
    const [method, path] = route;

    for (const [what, auth] of refused) {
      it(`${method} ${path} answers ${what} 401 with the Bearer challenge`, async () => {
        const response = await send({}, route, auth);
        expect(response.status).toBe(401);
        expect(response.headers.get("WWW-Authenticate")).toBe('Bearer realm="ratelimit"');
        expect(response.headers.get("content-type")).toBe(TEXT);
        expect(await response.text()).toBe(UNAUTHORIZED);
      });
    }

    it(`${method} ${path} answers 404 whatever the caller sends when no token is configured`, async () => {
      for (const auth of [undefined, RATELIMIT_ADMIN.Authorization, "Bearer "]) {
        const response = await send({ RATELIMIT_ADMIN_TOKEN: "" }, route, auth);
        expect(response.status).toBe(404);
        expect(response.headers.get("WWW-Authenticate")).toBeNull();
        expect(response.headers.get("content-type")).toBe(TEXT);
        expect(await response.text()).toBe("404 page not found");
      }
    });

    it(`${method} ${path} answers the admin bearer`, async () => {
      const response = await send({}, route, RATELIMIT_ADMIN.Authorization);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    });
  }
});
