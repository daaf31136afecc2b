// Password hashing for API users and news users: PBKDF2-SHA256 through WebCrypto with a per-user salt,
// stored as "pbkdf2-sha256$<iterations>$<salt>$<hash>" (base64url) so the cost can grow later.
import { fromBase64Url, sha256Hex, toBase64Url } from "./bytes";

/** The Workers runtime refuses PBKDF2 above 100 000 iterations, so that is both our floor and ceiling. */
export const PBKDF2_ITERATIONS = 100_000;
const HASH_BYTES = 32;
const encoder = new TextEncoder();

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations },
    key,
    HASH_BYTES * 8,
  );
  return new Uint8Array(bits);
}

/** Compares two byte strings in time that depends only on their lengths. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let difference = a.length ^ b.length;
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) difference |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return difference === 0;
}

/** Compares two strings in constant time (for secrets such as bearer tokens and master keys). */
export function constantTimeEqualText(a: string, b: string): boolean {
  return constantTimeEqual(encoder.encode(a), encoder.encode(b));
}

/**
 * Compares a presented secret with the configured one in constant time. Both are hashed first, so that the time does
 * not depend on their lengths either: a byte-wise comparison runs over the longer of the two, which tells a caller
 * sending ever longer guesses how long the secret is.
 */
export async function sameSecret(presented: string, secret: string): Promise<boolean> {
  const [a, b] = await Promise.all([sha256Hex(presented), sha256Hex(secret)]);
  return constantTimeEqualText(a, b);
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const hash = await derive(password, salt, PBKDF2_ITERATIONS);
  return `pbkdf2-sha256$${PBKDF2_ITERATIONS}$${toBase64Url(salt)}$${toBase64Url(hash)}`;
}

/** A stored hash of no real password: checking against it costs what a real check costs. */
const DECOY_HASH = `pbkdf2-sha256$${PBKDF2_ITERATIONS}$AAAAAAAAAAAAAAAAAAAAAA$${"A".repeat(43)}`;

/**
 * Checks a password against a stored hash. Pass `undefined` for an unknown user: the same work is done
 * against a decoy, so the answer time does not tell whether the user exists.
 */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const [scheme, iterationsText, saltText, hashText] = (stored ?? DECOY_HASH).split("$");
  const iterations = Number(iterationsText);
  if (scheme !== "pbkdf2-sha256" || !Number.isInteger(iterations) || iterations > PBKDF2_ITERATIONS) return false;
  const actual = await derive(password, fromBase64Url(saltText), iterations);
  return constantTimeEqual(actual, fromBase64Url(hashText)) && stored !== undefined;
}
