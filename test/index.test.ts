// The Worker's root: GET / names the three services and the package version; a path no service owns is a 404.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import packageJson from "../package.json";

describe("GET /", () => {
  it("names the three services and the package version", async () => {
    const response = await exports.default.fetch("http://example.com/");
    expect(response.status).toBe(200);
    const body = (await response.json()) as { name: string; version: string; services: { name: string }[] };
    expect(body.version).toBe(packageJson.version);
    expect(body.services.map((s) => s.name)).toEqual(["proxy-config-api", "news-api", "ratelimit"]);
  });

  it("answers 404 with the route for an unknown path", async () => {
    const response = await exports.default.fetch("http://example.com/nowhere", { method: "DELETE" });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: "no route for DELETE /nowhere" });
  });
});
