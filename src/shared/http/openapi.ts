// Routes declared once: a `createRoute` declaration gives both the OpenAPI entry and the route (its middleware, its
// validation and its handler). Bodies are validated with validate() rather than zod-openapi's own validator, so that a
// JSON body is read whatever its Content-Type says (curl's -d sends form encoding) and within the service's limit.
import { type createRoute, type OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import { z } from "../zod";
import type { Env, Handler, MiddlewareHandler } from "hono";
import type { BodyLimit } from "./request-body";
import { validate } from "./validate";

/** A JSON answer of a route's declaration: the one response vocabulary of every service. */
export const json = (schema: z.ZodType, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/** A text/plain answer of a route's declaration. */
export const text = (description: string) => ({
  description,
  content: { "text/plain": { schema: { type: "string" as const } } },
});

/** A route as createRoute() returns it. */
export type DeclaredRoute = ReturnType<typeof createRoute> & RouteConfig;

type JsonSchemaOf<R> = R extends { request: { body: { content: { "application/json": { schema: infer S } } } } }
  ? S
  : undefined;
type QuerySchemaOf<R> = R extends { request: { query: infer S } } ? S : undefined;

/** The route's path as Hono spells it ("/users/:id"), so that the handler's c.req.param() knows its parameters. */
type RoutingPath<R extends DeclaredRoute> = ReturnType<R["getRoutingPath"]> & string;

/** What the handler finds in c.req.valid(): the parsed body and query the route declares. */
export type ValidatedInput<R> = {
  in: object;
  out: (JsonSchemaOf<R> extends z.ZodType ? { json: z.output<JsonSchemaOf<R>> } : {}) &
    (QuerySchemaOf<R> extends z.ZodType ? { query: z.output<QuerySchemaOf<R>> } : {});
};

export interface RegisterOptions {
  /** The service's body limit, for a route with a JSON body. */
  bodyLimit?: (env: object) => BodyLimit;
  /**
   * Who validates the declared body and query: "register" (the default) adds validate() after the declaration's
   * middleware; "middleware" adds nothing, because the declaration's own middleware already validates them with the
   * same schemas (the news API reads JSON and form bodies in its own way and answers with its own error shape). The
   * declaration then documents them and types c.req.valid().
   */
  validation?: "register" | "middleware";
}

/**
 * Registers a declared route on the app: the OpenAPI entry, then the route itself with the declaration's middleware,
 * the validation of its JSON body and query (unless `validation` leaves it to that middleware), and the handler.
 */
export function register<E extends Env, R extends DeclaredRoute>(
  app: OpenAPIHono<E>,
  route: R,
  handler: Handler<E, RoutingPath<R>, ValidatedInput<R>>,
  options: RegisterOptions = {},
): void {
  const { middleware, ...documented } = route;
  app.openAPIRegistry.registerPath(documented);
  const chain: MiddlewareHandler[] = [middleware ?? []].flat() as MiddlewareHandler[];
  if (options.validation !== "middleware") chain.push(...validators(route, options));
  app.on(route.method.toUpperCase(), [route.getRoutingPath()], ...chain, handler as Handler);
}

/** validate() for the route's declared JSON body and query. */
function validators(route: DeclaredRoute, options: RegisterOptions): MiddlewareHandler[] {
  const chain: MiddlewareHandler[] = [];
  const media = route.request?.body?.content?.["application/json"];
  const body = media && "schema" in media ? media.schema : undefined;
  if (body instanceof z.ZodType) {
    if (!options.bodyLimit)
      throw new Error(`${route.method} ${route.path}: a JSON body needs the service's body limit`);
    chain.push(validate("json", body, options.bodyLimit));
  }
  const query = route.request?.query;
  if (query instanceof z.ZodType) chain.push(validate("query", query));
  return chain;
}
