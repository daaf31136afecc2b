// Authentication of the news API, after the rest generator: the master key (access_token or Bearer), HTTP Basic
// login with e-mail and password, and HS256 session tokens (jose) presented as Bearer or access_token.
import type { Context, MiddlewareHandler } from "hono";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { parseBasicAuth, parseBearer } from "../shared/basic-auth";
import { database } from "../shared/db";
import { constantTimeEqualText, verifyPassword } from "../shared/passwords";
import { BASIC_CHALLENGE, unauthorized } from "./errors";
import { newsSettings, requiredSecret, type NewsSettings } from "./settings";
import { findUserByEmail, getUser, type NewsUser } from "./users";
import { parseNews, requestBody, type Body } from "./validation";
import { Credentials } from "./schemas";

export type NewsEnv = { Bindings: Env; Variables: { body: Body; user: NewsUser } };

const encoder = new TextEncoder();

/** The bearer token the request carries: the Authorization header first, then access_token in the body, then in the query. */
async function presentedToken(c: Context): Promise<string | undefined> {
  const header = parseBearer(c.req.header("authorization"));
  if (header) return header;
  const body = await requestBody(c);
  if (typeof body.access_token === "string") return body.access_token;
  return c.req.query("access_token") || undefined;
}

/** Requires the master key MASTER_KEY, compared in constant time; anything else is 401. */
export const requireMasterKey: MiddlewareHandler<NewsEnv> = async (c, next) => {
  const masterKey = requiredSecret(newsSettings(c.env), "MASTER_KEY");
  const token = await presentedToken(c);
  if (token === undefined || !constantTimeEqualText(token, masterKey)) throw unauthorized();
  await next();
};

export async function signToken(settings: NewsSettings, userId: string): Promise<string> {
  return new SignJWT({ id: userId })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt()
    .setExpirationTime(settings.JWT_EXPIRES_IN)
    .sign(encoder.encode(requiredSecret(settings, "JWT_SECRET")));
}

/** The user id of a valid, unexpired token signed with JWT_SECRET, or undefined. Only HS256 is accepted. */
export async function verifyToken(settings: NewsSettings, token: string): Promise<string | undefined> {
  const key = encoder.encode(requiredSecret(settings, "JWT_SECRET"));
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ["HS256"] });
    return typeof payload.id === "string" && payload.id !== "" ? payload.id : undefined;
  } catch (error) {
    if (error instanceof joseErrors.JOSEError) return undefined;
    throw error;
  }
}

/**
 * Requires a signed-in user (optionally with one of `roles`) and puts it on the context. A missing, expired,
 * tampered token, a deleted user and a role that does not suffice all answer 401, as the generator does.
 */
export function requireUser(roles?: NewsUser["role"][]): MiddlewareHandler<NewsEnv> {
  return async (c, next) => {
    const token = await presentedToken(c);
    if (!token) throw unauthorized();
    const id = await verifyToken(newsSettings(c.env), token);
    const user = id === undefined ? undefined : await getUser(database(c.env.DB), id);
    if (!user || (roles && !roles.includes(user.role))) throw unauthorized();
    c.set("user", user);
    await next();
  };
}

export const requireAdmin = requireUser(["admin"]);

/**
 * HTTP Basic e-mail and password. Malformed credentials answer 400 with the validation object; an unknown e-mail
 * and a wrong password both answer 401 after the same work (the password is checked against a decoy hash).
 */
export const requirePassword: MiddlewareHandler<NewsEnv> = async (c, next) => {
  const credentials = parseBasicAuth(c.req.header("authorization"));
  if (!credentials) throw unauthorized(BASIC_CHALLENGE);
  const { email, password } = parseNews(Credentials, { email: credentials.username, password: credentials.password });
  const user = await findUserByEmail(database(c.env.DB), email);
  const valid = await verifyPassword(password, user?.passwordHash);
  if (!user || !valid) throw unauthorized(BASIC_CHALLENGE);
  c.set("user", user);
  await next();
};
