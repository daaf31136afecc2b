// The admin bearer check of /rlconfig*, /debug, /stats and the metrics page, and its OpenAPI security scheme.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { parseBearer } from "../../shared/http/basic-auth";
import { HttpError } from "../../shared/http/errors";
import { text } from "../../shared/http/openapi";
import { sameSecret } from "../../shared/passwords";
import { rateLimitSettings } from "../settings";

/** The security scheme's name in the OpenAPI document. */
export const ADMIN_TOKEN_SCHEME = "ratelimitAdminToken";

/** The `security` of an admin route's declaration. */
export const adminSecurity = [{ [ADMIN_TOKEN_SCHEME]: [] }];

const CHALLENGE = 'Bearer realm="ratelimit"';

/** The refusals of requireAdminToken, for an admin route's declaration. */
export const adminErrors = {
  401: {
    ...text("Missing or wrong RATELIMIT_ADMIN_TOKEN bearer"),
    headers: { "WWW-Authenticate": { description: CHALLENGE, schema: { type: "string" as const } } },
  },
  404: text("No RATELIMIT_ADMIN_TOKEN is configured: the admin routes do not exist"),
};

/** Adds the admin token's security scheme to the app's OpenAPI registry (copied into the root document). */
export function registerAdminTokenScheme(app: OpenAPIHono<{ Bindings: Env }>): void {
  app.openAPIRegistry.registerComponent("securitySchemes", ADMIN_TOKEN_SCHEME, {
    type: "http",
    scheme: "bearer",
    description: "RATELIMIT_ADMIN_TOKEN; without a configured token the admin routes answer 404.",
  });
}

const unauthorized = (message: string) => new HttpError(401, message, { "WWW-Authenticate": CHALLENGE });

/** Whether `authorization` holds the RATELIMIT_ADMIN_TOKEN bearer (false when no token is configured). */
async function holdsAdminToken(env: Env, authorization: string | undefined): Promise<boolean> {
  const expected = rateLimitSettings(env).RATELIMIT_ADMIN_TOKEN;
  const given = parseBearer(authorization);
  return Boolean(expected) && given !== undefined && (await sameSecret(given, expected!));
}

/** Admin routes need the RATELIMIT_ADMIN_TOKEN bearer; without a configured token they do not exist. */
export const requireAdminToken = createMiddleware<{ Bindings: Env }>(async (c, next) => {
  if (!rateLimitSettings(c.env).RATELIMIT_ADMIN_TOKEN) throw new HttpError(404, "404 page not found");
  if (!(await holdsAdminToken(c.env, c.req.header("Authorization")))) {
    throw unauthorized("unauthorized: send Authorization: Bearer <RATELIMIT_ADMIN_TOKEN>");
  }
  await next();
});

/**
 * An admin-only option of a public route (POST /json?explain=true): 401 without the bearer, also when no token is
 * configured (the route itself exists for everyone).
 */
export async function requireAdminFor(env: Env, authorization: string | undefined, what: string): Promise<void> {
  if (await holdsAdminToken(env, authorization)) return;
  const configured = Boolean(rateLimitSettings(env).RATELIMIT_ADMIN_TOKEN);
  throw unauthorized(
    configured
      ? `unauthorized: ${what} needs Authorization: Bearer <RATELIMIT_ADMIN_TOKEN>`
      : `unauthorized: ${what} needs the RATELIMIT_ADMIN_TOKEN bearer, and no RATELIMIT_ADMIN_TOKEN is configured`,
  );
}
