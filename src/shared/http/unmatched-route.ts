// What a request that no route answered gets: 405 with `Allow` when its path exists with other methods, else 404, in
// the error shape of the service that owns the path. Both come from the routes the apps registered, so they cannot
// drift from the routing.
import type { Context, Env, NotFoundHandler } from "hono";
import { TrieRouter } from "hono/router/trie-router";
import { perIsolate } from "../isolate";
import { HttpError } from "./errors";

/** A path no route of any service matches (its first segment decides whose 404 shape answers). */
export class RouteNotFound extends HttpError {
  override name = "RouteNotFound";
  constructor(
    readonly method: string,
    readonly path: string,
  ) {
    super(404, `no route for ${method} ${path}`);
  }
}

/** A path that exists, but not with this method: `allowed` is what the `Allow` header lists. */
export class MethodNotAllowed extends HttpError {
  override name = "MethodNotAllowed";
  constructor(
    readonly method: string,
    readonly path: string,
    readonly allowed: readonly string[],
  ) {
    super(405, `method ${method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`, {
      Allow: allowed.join(", "),
    });
  }
}

/** A route as Hono keeps it in an app's `routes` (method "ALL" for use() and all()). */
export interface RegisteredRoute {
  method: string;
  path: string;
}

/** One service (or the root app) as the table sees it. */
export interface RouteOwner<E extends Env> {
  /** The app's `routes`: read when the first unmatched request comes, after every route is registered. */
  routes: readonly RegisteredRoute[];
  /** Routes whose path is a setting (read per request, matched literally), e.g. the rate limit metrics page. */
  settingRoutes?: (env: E["Bindings"]) => readonly RegisteredRoute[];
  /** The owner's onError: renders RouteNotFound and MethodNotAllowed in its shape. */
  render: (error: Error, c: Context<E>) => Response;
}

interface OwnerTable {
  /** Every route with a method of its own, by pattern; the handler stands for the route's method. */
  methods: TrieRouter<string>;
  /** The first path segments of the owner's routes, e.g. "projects" for /projects/:projectLabel. */
  prefixes: Set<string>;
}

/** The order of the `Allow` header; methods not listed follow in alphabetical order. */
const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

const firstSegment = (path: string) => path.split("/")[1] ?? "";

/**
 * A pattern that matches every path (the rate limit metrics GET, "*") says nothing about which paths exist; a
 * parameter or a wildcard in the first segment claims no prefix.
 */
const claimsEveryPath = (path: string) => path === "*" || path === "/*";
const isStaticSegment = (segment: string) => segment !== "" && !segment.startsWith(":") && !segment.includes("*");

function tableOf(routes: readonly RegisteredRoute[]): OwnerTable {
  const methods = new TrieRouter<string>();
  const prefixes = new Set<string>();
  for (const route of routes) {
    if (claimsEveryPath(route.path)) continue;
    const segment = firstSegment(route.path);
    if (isStaticSegment(segment)) prefixes.add(segment);
    // A route for every method (use(), all()) that was matched and still let the request fall through here is a
    // middleware: it does not make the path exist.
    if (route.method !== "ALL") methods.add("ALL", route.path, route.method.toUpperCase());
  }
  return { methods, prefixes };
}

const tablesOf = perIsolate("unmatched-route tables", (owners: readonly RouteOwner<any>[]) =>
  owners.map((owner) => tableOf(owner.routes)),
);

function allowHeaderOrder(methods: Set<string>): string[] {
  const rank = (method: string) => {
    const index = METHOD_ORDER.indexOf(method);
    return index < 0 ? METHOD_ORDER.length : index;
  };
  return [...methods].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The root app's notFound. `owners` lists the services in mounting order and then the root app, whose shape answers
 * paths no service owns. A path is owned by the first owner with a route whose pattern matches it (then its methods,
 * of every owner, make the `Allow` header; HEAD comes with GET), else by the first owner with a route under the same
 * first segment (/projects/x/y → the proxy), else by the root.
 */
export function unmatchedRoute<E extends Env>(owners: readonly RouteOwner<E>[]): NotFoundHandler<E> {
  if (owners.length === 0) throw new Error("unmatchedRoute needs at least the root app");
  return (c) => {
    const method = c.req.method.toUpperCase();
    const path = c.req.path;
    const tables = tablesOf(owners);
    const allowed = new Set<string>();
    let pathOwner: RouteOwner<E> | undefined;
    let prefixOwner: RouteOwner<E> | undefined;
    owners.forEach((owner, index) => {
      const settingRoutes = owner.settingRoutes?.(c.env) ?? [];
      const methods = [
        ...tables[index].methods.match("ALL", path)[0].map(([routeMethod]) => routeMethod),
        ...settingRoutes.filter((route) => route.path === path).map((route) => route.method.toUpperCase()),
      ];
      if (methods.length > 0) pathOwner ??= owner;
      for (const routeMethod of methods) allowed.add(routeMethod);
      const segment = firstSegment(path);
      const claimed =
        tables[index].prefixes.has(segment) || settingRoutes.some((route) => firstSegment(route.path) === segment);
      if (claimed && isStaticSegment(segment)) prefixOwner ??= owner;
    });
    if (allowed.has("GET")) allowed.add("HEAD");
    // A route of this very method that let the request through (a handler that called next()) answers 404.
    if (pathOwner && !allowed.has(method)) {
      return pathOwner.render(new MethodNotAllowed(method, path, allowHeaderOrder(allowed)), c);
    }
    const owner = pathOwner ?? prefixOwner ?? owners[owners.length - 1];
    return owner.render(new RouteNotFound(method, path), c);
  };
}
