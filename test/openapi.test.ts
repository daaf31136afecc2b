// The one OpenAPI document (/openapi.json) and its reference page (/docs), through the Worker: every service's
// operations, each routed, the document as committed in docs/openapi.json (`npm run docs:openapi` rewrites it), and a
// page that loads only the Worker's own files.
import { describe, expect, it } from "vitest";
import committed from "../docs/openapi.json";
import { call } from "./support/worker-http";

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
}

interface Document {
  openapi: string;
  info: { title: string; version: string };
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; scheme: string }>; schemas: Record<string, any> };
}

const CONNECT_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

async function served(): Promise<Document> {
  const response = await call("/openapi.json");
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/json");
  return (await response.json()) as Document;
}

/** "METHOD /path" of the operations whose first tag is (keep) or is not (!keep) one of `tags`, in document order. */
function operations(document: Document, tags: string[], keep: boolean): string[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => tags.includes(operation.tags?.[0] ?? "") === keep)
      .map(([method]) => `${method.toUpperCase()} ${path}`),
  );
}

describe("GET /openapi.json", () => {
  it("is the committed docs/openapi.json", async () => {
    expect(await served(), "docs/openapi.json differs from the served document: run npm run docs:openapi").toEqual(
      committed,
    );
  });

  it("is OpenAPI 3.1 with every operation of the three services, the proxy's first", async () => {
    const document = await served();
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(document.info.title).toBe("Edge control plane API");
    expect(document.servers).toEqual([{ url: "/", description: "The Worker that serves this document" }]);
    expect(operations(document, ["news"], true)).toEqual([
      "POST /users",
      "GET /users",
      "POST /auth",
      "GET /users/me",
      "GET /users/{id}",
      "PUT /users/{id}",
      "DELETE /users/{id}",
      "PUT /users/{id}/password",
      "GET /news/jobs",
      "GET /news",
      "POST /news",
      "GET /news/{id}",
      "PUT /news/{id}",
      "DELETE /news/{id}",
      "GET /search",
    ]);
    expect(operations(document, ["ratelimit"], true)).toEqual([
      "POST /json",
      "GET /healthcheck",
      "GET /rlconfig",
      "GET /rlconfig/files",
      "PUT /rlconfig/files",
      "DELETE /rlconfig/files",
      "PUT /rlconfig/files/{name}",
      "DELETE /rlconfig/files/{name}",
      "POST /rlconfig/validate",
      "POST /rlconfig/validate/{name}",
      "GET /debug",
      "GET /stats",
      "GET /metrics",
      `POST ${CONNECT_PATH}`,
    ]);
    expect(operations(document, ["news", "ratelimit"], false)).toEqual([
      "GET /test/ping",
      "GET /test/authping",
      "GET /projects",
      "GET /projects/{projectLabel}",
      "GET /projects/{projectLabel}/deployment",
      "GET /domains/{projectLabel}",
      "GET /domains/{projectLabel}/{backendLabel}",
      "POST /domains/massupdate",
      "POST /containers/{projectLabel}",
      "POST /backends/{projectLabel}",
      "PATCH /backends/{projectLabel}/{backendLabel}/setContainersOf/{targetBackendLabel}",
      "POST /admin/projects",
      "GET /admin/projects",
      "DELETE /admin/projects/{label}",
      "POST /admin/hosts",
      "GET /admin/hosts",
      "PUT /admin/zones/{name}",
      "DELETE /admin/zones/{name}",
      "GET /admin/zones",
      "POST /admin/apiusers",
      "GET /admin/apiusers",
      "DELETE /admin/apiusers/{username}",
      "POST /admin/users",
      "GET /admin/users",
      "PUT /admin/containers/{projectLabel}/{containerLabel}/permissions",
      "GET /admin/audit",
      "GET /admin/gensynchaprx",
      "GET /admin/writesshprx",
      "GET /maintenance/start",
      "GET /.well-known/acme-challenge/{token}",
      "GET /admin/jobs",
      "GET /admin/jobs/{id}",
      "GET /admin/haproxy",
      "GET /admin/haproxy/versions",
      "GET /admin/haproxy/versions/{version}",
      "GET /admin/sshproxy",
      "GET /admin/sshproxy/versions",
      "GET /admin/sshproxy/versions/{version}",
      "GET /admin/certificates",
      "PUT /admin/certificates/{name}",
      "DELETE /admin/certificates/{name}",
      "GET /admin/haproxy/preview",
      "GET /admin/haproxy/status",
      "POST /admin/haproxy/versions/{version}/activate",
      "GET /admin/sshproxy/preview",
      "POST /admin/sshproxy/versions/{version}/activate",
      "GET /admin/metrics",
    ]);
  });

  it("names the security schemes of each service, and every operation names its own (or none)", async () => {
    const document = await served();
    const schemes = document.components.securitySchemes;
    expect(Object.keys(schemes)).toEqual([
      "user_auth",
      "proxy_metrics_token",
      "news_master_key",
      "news_token",
      "news_login",
      "ratelimitAdminToken",
    ]);
    expect(schemes.user_auth).toMatchObject({ type: "http", scheme: "basic" });
    expect(schemes.proxy_metrics_token).toMatchObject({ type: "http", scheme: "bearer" });
    expect(document.paths["/admin/metrics"].get.security).toEqual([{ user_auth: [] }, { proxy_metrics_token: [] }]);
    expect(schemes.news_token).toMatchObject({ type: "http", scheme: "bearer", bearerFormat: "JWT" });
    expect(schemes.ratelimitAdminToken).toMatchObject({ type: "http", scheme: "bearer" });
    const unsecured = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => operation.security?.length === 0)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(unsecured).toEqual([
      "GET /test/ping",
      "GET /.well-known/acme-challenge/{token}",
      "GET /users/{id}",
      "POST /json",
      "GET /healthcheck",
      `POST ${CONNECT_PATH}`,
    ]);
  });

  it("gives every operation a unique operationId, a summary, a declared tag and (but the health checks) a 4xx", async () => {
    const document = await served();
    const tags = document.tags.map((tag) => tag.name);
    const ids = new Set<string>();
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const name = `${method.toUpperCase()} ${path}`;
        expect({ name, id: operation.operationId }).toEqual({ name, id: expect.stringMatching(/^[a-zA-Z]+$/) });
        expect(ids.has(operation.operationId!), name).toBe(false);
        ids.add(operation.operationId!);
        expect({ name, summary: operation.summary }).toEqual({ name, summary: expect.any(String) });
        expect(tags).toContain(operation.tags?.[0]);
        const clientErrors = Object.keys(operation.responses).filter((status) => status.startsWith("4"));
        if (name !== "GET /test/ping" && name !== "GET /healthcheck")
          expect({ name, clientErrors }).not.toEqual({ name, clientErrors: [] });
      }
    }
  });

  it("documents each service's error shape", async () => {
    const document = await served();
    const schemaOf = (path: string, method: string, status: string) =>
      (document.paths[path][method].responses[status] as { content: Record<string, { schema: unknown }> }).content;
    expect(schemaOf("/projects", "get", "401")).toEqual({
      "application/json": { schema: { $ref: "#/components/schemas/MessageResult" } },
    });
    expect(schemaOf("/news", "get", "401")).toEqual({
      "application/json": { schema: { $ref: "#/components/schemas/NewsFailure" } },
    });
    expect(schemaOf("/rlconfig/files", "put", "400")).toEqual({ "text/plain": { schema: { type: "string" } } });
    expect(schemaOf(CONNECT_PATH, "post", "400")).toEqual({
      "application/json": { schema: { $ref: "#/components/schemas/ConnectError" } },
    });
    expect(document.components.schemas.NewsFailure.required).toEqual(["valid", "name", "param", "message"]);
    expect(document.components.schemas.MassDomainUpdate.required).toEqual(["domainOperations"]);
    expect(Object.keys(document.components.schemas.Project.properties)).toEqual([
      "label",
      "fullname",
      "backends",
      "containers",
      "version",
    ]);
  });

  it("gives every path parameter an example, or says where its value comes from", async () => {
    const { paths } = await served();
    const unexplained = Object.entries(paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, operation]) =>
        ((operation as any).parameters ?? [])
          .filter((parameter: any) => parameter.in === "path")
          .filter((parameter: any) => parameter.example === undefined && !parameter.description)
          .map((parameter: any) => `${method.toUpperCase()} ${path} ${parameter.name}`),
      ),
    );
    expect(unexplained).toEqual([]);
  });

  it("documents the rate limit configuration's dry run with its PUT's very body", async () => {
    const { paths } = await served();
    const body = (path: string, method: string) => (paths[path][method] as any).requestBody.content["application/json"];
    const put = body("/rlconfig/files", "put");
    expect(put.schema.oneOf.map((choice: any) => choice.required)).toEqual([["files"], ["configs"]]);
    expect(body("/rlconfig/validate", "post")).toEqual(put);
  });

  it("documents only routed operations (none falls through to the unmatched route's 404 or 405)", async () => {
    const document = await served();
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const method of Object.keys(methods)) {
        const concrete = path.replaceAll(/\{[^}]+\}/g, "x");
        const response = await call(concrete, { method: method.toUpperCase() });
        // A route's own 404 (an unknown challenge token) is routed; the unmatched route's answers name the route.
        const body = await response.text();
        const unmatched = body.includes("no route for") || body.includes(`is not allowed on ${concrete}`);
        expect({ path, method, unmatched }).toEqual({ path, method, unmatched: false });
      }
    }
  });
});

describe("GET /docs", () => {
  it("is Swagger UI loaded from the Worker's own origin, pointed at /openapi.json, under a same-origin policy", async () => {
    const response = await call("/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=UTF-8");
    expect(response.headers.get("content-security-policy")).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    const html = await response.text();
    expect(html).toContain("<title>Edge control plane API</title>");
    expect(html).toContain('<div id="swagger-ui" data-url="/openapi.json"></div>');
    expect([...html.matchAll(/(?:src|href)="([^"]*)"/g)].map(([, url]) => url)).toEqual([
      "/swagger-ui/swagger-ui.css",
      "/swagger-ui/favicon-32x32.png",
      "/swagger-ui/swagger-ui-bundle.js",
      "/docs/swagger-initializer.js",
    ]);
    expect(html).not.toMatch(/<script>|<style|style=/);
  });
});
