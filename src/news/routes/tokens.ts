// The news API's session tokens (JWT HS256 signed with JWT_SECRET) and the rule that ends them. Two formats are
// valid: this service's `{id, ver, iat, exp}`, checked against the user's token version, and the original service's
// `{id, iat, exp}` (or `{id, iat}` when allowed), which existing clients hold, checked against the time the user's
// password last changed.
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { requiredSecret, type NewsSettings } from "../settings";
import type { NewsUser } from "../store/users";

const encoder = new TextEncoder();

/**
 * What a valid token says: whose it is, and either the user's token version when it was issued (`ver`, the tokens
 * this service signs) or only when it was issued (`iat`, seconds since the epoch: the original service's tokens).
 */
export type TokenClaims = { id: string; ver: number } | { id: string; ver?: undefined; iat: number };

/** How far ahead of this clock an original token's `iat` may be (the two services' clocks differ a little). */
export const IAT_LEEWAY_SECONDS = 60;

/**
 * A function that signs session tokens, made only once JWT_SECRET is known to be set (else it throws the 500 naming
 * it). A route that writes before it signs takes its signer first, so a missing secret never leaves a write behind.
 */
export function tokenSigner(settings: NewsSettings): (user: Pick<NewsUser, "id" | "tokenVersion">) => Promise<string> {
  const key = encoder.encode(requiredSecret(settings, "JWT_SECRET"));
  return (user) =>
    new SignJWT({ id: user.id, ver: user.tokenVersion })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuedAt()
      .setExpirationTime(settings.JWT_EXPIRES_IN)
      .sign(key);
}

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/**
 * The claims of a valid, unexpired token signed with JWT_SECRET, or undefined. Only HS256 is accepted. A token with
 * `ver` must carry a non-negative integer there. A token without it (the original's format) must carry `iat`, no
 * later than now (give or take IAT_LEEWAY_SECONDS), or nothing could tell whether its password has changed since; and
 * `exp`, unless JWT_ORIGINAL_TOKENS_WITHOUT_EXP accepts the original's tokens that never end.
 */
export async function verifyToken(settings: NewsSettings, token: string): Promise<TokenClaims | undefined> {
  const key = encoder.encode(requiredSecret(settings, "JWT_SECRET"));
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ["HS256"] });
    const { id, ver, iat, exp } = payload;
    if (typeof id !== "string" || id === "") return undefined;
    if ("ver" in payload) return isCount(ver) ? { id, ver } : undefined;
    // jose has checked exp, when present, against the clock; the original format must have one.
    const endless = exp === undefined && settings.JWT_ORIGINAL_TOKENS_WITHOUT_EXP;
    if (!isCount(iat) || !(isCount(exp) || endless) || iat > Date.now() / 1000 + IAT_LEEWAY_SECONDS) return undefined;
    return { id, iat };
  } catch (error) {
    if (error instanceof joseErrors.JOSEError) return undefined;
    throw error;
  }
}

/**
 * Whether a verified token still speaks for its user. A versioned token: while the user's token version is the one it
 * was issued under (a password change raises it). An original token: unless the password changed after its `iat`.
 * `iat` counts whole seconds and the change time milliseconds, so a change within the second the token was issued
 * cannot be ordered against it: such a token is refused (it may have been issued just before the change), which costs
 * at worst one login.
 */
export function tokenStillValid(
  claims: TokenClaims,
  user: Pick<NewsUser, "tokenVersion" | "passwordChangedAt">,
): boolean {
  if (claims.ver !== undefined) return user.tokenVersion === claims.ver;
  return user.passwordChangedAt === null || user.passwordChangedAt.getTime() < claims.iat * 1000;
}
