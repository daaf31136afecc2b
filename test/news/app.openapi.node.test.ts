// The news routes' OpenAPI entries (plain Node): every route is declared once, and the entries the root app takes
// into /openapi.json generate (tag "news", the news security schemes, bodies as JSON or form fields).
import { describe, expect, it } from "vitest";
import { newsApp } from "../../src/news/app";

const ROUTES = [
  "post /users",
  "post /auth",
  "get /users",
  "get /users/me",
  "get /users/{id}",
  "put /users/{id}",
  "put /users/{id}/password",
  "delete /users/{id}",
  "get /news/jobs",
  "get /news",
  "get /news/{id}",
  "post /news",
  "put /news/{id}",
  "delete /news/{id}",
  "get /search",
];

const document = () =>
  newsApp.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "news", version: "test" } }) as unknown as {
    paths: Record<
      string,
      Record<
        string,
        {
          tags: string[];
          security?: Record<string, string[]>[];
          requestBody?: { content: object };
          parameters?: { name: string; in: string }[];
        }
      >
    >;
    components: { securitySchemes: Record<string, { type: string; scheme: string }> };
  };

describe("the news routes' OpenAPI entries", () => {
  it("document every route once, in the order they are registered, and only those", () => {
    const operations = Object.entries(document().paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method} ${path}`),
    );
    expect(operations.sort()).toEqual([...ROUTES].sort());
    const registered = newsApp.routes.map(
      (route) => `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, "{$1}")}`,
    );
    // Hono lists a route once per handler (each middleware, then the handler): each route once, in order.
    expect([...new Set(registered)]).toEqual(ROUTES);
  });

  it("list 400 and 413 for every write: its body, where a token may come, is read and may be refused", () => {
    const { paths } = document() as unknown as { paths: Record<string, Record<string, { responses: object }>> };
    const writes = Object.entries(paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([method]) => method !== "get")
        .map(([method, operation]) => [`${method} ${path}`, Object.keys(operation.responses)] as const),
    );
    expect(writes.map(([name]) => name).sort()).toEqual(ROUTES.filter((route) => !route.startsWith("get ")).sort());
    for (const [name, statuses] of writes) expect(statuses, name).toEqual(expect.arrayContaining(["400", "413"]));
  });

  it("tag every operation news and name only the news security schemes", () => {
    const { paths, components } = document();
    expect(Object.keys(components.securitySchemes).sort()).toEqual(["news_login", "news_master_key", "news_token"]);
    for (const methods of Object.values(paths)) {
      for (const operation of Object.values(methods)) {
        expect(operation.tags).toEqual(["news"]);
        for (const requirement of operation.security ?? []) {
          for (const scheme of Object.keys(requirement)) expect(components.securitySchemes).toHaveProperty(scheme);
        }
      }
    }
    expect(paths["/auth"].post.security).toEqual([{ news_master_key: [], news_login: [] }]);
    expect(paths["/users/{id}"].get.security).toEqual([]);
  });

  it("document bodies as JSON or form fields, and list queries as parameters", () => {
    const { paths } = document();
    expect(Object.keys(paths["/users"].post.requestBody!.content)).toEqual([
      "application/json",
      "application/x-www-form-urlencoded",
      "multipart/form-data",
    ]);
    expect(paths["/news/jobs"].get.parameters!.map((parameter) => parameter.name)).toEqual(["page", "limit"]);
    expect(paths["/news/jobs"].get.security).toEqual([{ news_token: [] }]);
    expect(paths["/search"].get.parameters!.map((parameter) => parameter.name)).toEqual([
      "topics",
      "companyids",
      "start_date",
      "end_date",
      "limit",
      "page",
    ]);
    expect(paths["/news/{id}"].get.parameters).toEqual([expect.objectContaining({ name: "id", in: "path" })]);
  });
});
