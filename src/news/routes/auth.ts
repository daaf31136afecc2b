// Authentication of the news API, after the rest generator: the master key (access_token or Bearer), HTTP Basic
// login with e-mail and password, and HS256 session tokens (jose) presented as Bearer, access_token or the `jwt`
// cookie. A token names its user (tokens.ts says how a password change or a deletion ends every earlier token).
import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { parseBasicAuth, parseBearer } from "../../shared/http/basic-auth";
import { database } from "../../shared/db";
import { sameSecret, verifyPassword } from "../../shared/passwords";
import { loginRefused, masterKeyRefused, tokenRefused } from "../errors";
import { newsSettings, requiredSecret } from "../settings";
import { findUserByEmail, getUser, type NewsUser } from "../store/users";
import { parseNews, requestBody, type Body } from "./validation";
import { Credentials } from "./schemas";
import { tokenStillValid, verifyToken } from "./tokens";

export type NewsEnv = { Bindings: Env; Variables: { body: Body; user: NewsUser } };

/** How the news API's routes are secured, as OpenAPI security schemes (app.ts registers them as components). */
export const SECURITY_SCHEMES = {
  news_master_key: {
    type: "http",
    scheme: "bearer",
    description: "MASTER_KEY, as a Bearer token or as access_token in the body or the query",
  },
  news_token: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "A session token from POST /users or POST /auth: Bearer, access_token, or the `jwt` cookie of a login",
  },
  news_login: { type: "http", scheme: "basic", description: "The user's e-mail address and password" },
} as const;

/** A route's security requirement: every scheme named must be satisfied. */
export const secured = (...schemes: (keyof typeof SECURITY_SCHEMES)[]) => [
  Object.fromEntries(schemes.map((scheme) => [scheme, []])) as Record<string, string[]>,
];

/** The bearer token the request carries: the Authorization header first, then access_token in the body, the query. */
async function presentedToken(c: Context): Promise<string | undefined> {
  const header = parseBearer(c.req.header("authorization"));
  if (header) return header;
  const body = await requestBody(c);
  if (typeof body.access_token === "string") return body.access_token;
  return c.req.query("access_token") || undefined;
}

/** The cookie restfulnews's login set and its token check read (the reference notes' N8). */
const SESSION_COOKIE = "jwt";

/**
 * The `jwt` cookie, unless the browser says the request comes from another site: a browser sends the cookie with
 * requests any site's page makes, so such a request could act for the user. Clients that are not browsers send no
 * Sec-Fetch-Site; and the cookie this service sets is SameSite=Strict besides.
 */
function cookieToken(c: Context): string | undefined {
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined && site !== "same-origin" && site !== "none") return undefined;
  return getCookie(c, SESSION_COOKIE) || undefined;
}

/** Sets the session cookie a login answers with, for clients of the original that read their token from it. */
export function setSessionCookie(c: Context, token: string): void {
  setCookie(c, SESSION_COOKIE, token, { path: "/", httpOnly: true, secure: true, sameSite: "Strict" });
}

/** Requires the master key MASTER_KEY, compared in constant time; anything else is 401. */
export const requireMasterKey: MiddlewareHandler<NewsEnv> = async (c, next) => {
  const masterKey = requiredSecret(newsSettings(c.env), "MASTER_KEY");
  const token = await presentedToken(c);
  if (token === undefined || !(await sameSecret(token, masterKey))) throw masterKeyRefused();
  await next();
};

/**
 * Requires a signed-in user (optionally with one of `roles`) and puts it on the context. A missing, expired,
 * tampered token, a deleted user, a token issued before the password last changed and a role that does not suffice
 * all answer 401, as the generator does. The token is checked against the row the user is read from anyway: one D1
 * read.
 */
export function requireUser(roles?: NewsUser["role"][]): MiddlewareHandler<NewsEnv> {
  return async (c, next) => {
    const token = (await presentedToken(c)) ?? cookieToken(c);
    if (!token) throw tokenRefused();
    const claims = await verifyToken(newsSettings(c.env), token);
    const user = claims && (await getUser(database(c.env.DB), claims.id));
    if (!claims || !user || !tokenStillValid(claims, user) || (roles && !roles.includes(user.role)))
      throw tokenRefused();
    c.set("user", user);
    await next();
  };
}

export const requireAdmin = requireUser(["admin"]);

/**
 * HTTP Basic e-mail and password. A malformed e-mail address answers 400 with the validation object; an unknown e-mail
 * and a wrong password (whatever its length) both answer 401 after the same work (the password is checked against a
 * decoy hash). No stored password is longer than the sign-up limit, so a longer one simply does not match.
 */
export const requirePassword: MiddlewareHandler<NewsEnv> = async (c, next) => {
  const credentials = parseBasicAuth(c.req.header("authorization"));
  if (!credentials) throw loginRefused();
  const { email, password } = parseNews(Credentials, { email: credentials.username, password: credentials.password });
  const user = await findUserByEmail(database(c.env.DB), email);
  const valid = await verifyPassword(password, user?.passwordHash);
  if (!user || !valid) throw loginRefused();
  c.set("user", user);
  await next();
};
