// The console's only way out: requests to the Worker's own origin, with the credentials held in this module's memory
// for the life of the tab (never in localStorage or a cookie), forgotten at sign-out.

/** What a request answered: status, parsed JSON (or the text), and the ETag when one came. */
export type Answer = { status: number; ok: boolean; body: any; text: string; etag: string | null };

let proxyAuthorization: string | undefined;
let rateLimitAuthorization: string | undefined;

/** Base64 of UTF-8 text: btoa alone takes Latin-1 only. */
function base64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

export function hasRateLimitToken(): boolean {
  return rateLimitAuthorization !== undefined;
}

/** Keeps the proxy API's credentials only when GET /test/authping accepts them; answers the ping. */
export async function signInToProxy(username: string, password: string): Promise<Answer> {
  const candidate = `Basic ${base64(`${username}:${password}`)}`;
  const ping = await send(candidate, "GET", "/test/authping", {});
  if (ping.ok) proxyAuthorization = candidate;
  return ping;
}

/** Keeps the rate limit service's admin token only when GET /rlconfig/files accepts it; answers that request. */
export async function adoptRateLimitToken(token: string): Promise<Answer> {
  const candidate = `Bearer ${token}`;
  const check = await send(candidate, "GET", "/rlconfig/files", {});
  if (check.ok) rateLimitAuthorization = candidate;
  return check;
}

/** Sign-out: nothing of the session is kept. */
export function forgetCredentials(): void {
  proxyAuthorization = undefined;
  rateLimitAuthorization = undefined;
}

/**
 * What a request that got no answer gives: the network failed, the server is down, or the answer was cut. Status 0,
 * as a browser reports it; a write may or may not have been stored.
 */
export const NO_ANSWER: Answer = {
  status: 0,
  ok: false,
  body: undefined,
  text: "No answer from the server: the network failed or the server is down.",
  etag: null,
};

/**
 * What a path the URL parser would change gives, unsent: a segment `.` or `..` (as typed in an address such as
 * #/projects/.., or escaped as %2E) would be resolved away, and the request would reach another resource than the one
 * named, with the user's credentials (GET /projects/.. is GET /).
 */
export const NOT_SENT: Answer = {
  status: 404,
  ok: false,
  body: undefined,
  text: "Not found: a name of . or .. names nothing.",
  etag: null,
};

const resolvesElsewhere = (path: string) => new URL(path, "http://console.invalid").pathname !== path.split("?")[0];

type Options = { body?: unknown; headers?: Record<string, string>; text?: boolean };

async function send(authorization: string | undefined, method: string, path: string, options: Options) {
  if (resolvesElsewhere(path)) return { ...NOT_SENT };
  const headers: Record<string, string> = { ...options.headers };
  if (authorization) headers.Authorization = authorization;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  let response: Response;
  let text: string;
  try {
    // Same origin only (a path, never a URL), and no cookie or cached login goes with it.
    response = await fetch(path, { method, headers, body, credentials: "omit", cache: "no-store" });
    text = await response.text();
  } catch {
    return { ...NO_ANSWER };
  }
  let parsed: unknown = text;
  if (!options.text && (response.headers.get("Content-Type") ?? "").includes("json")) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  const etag = response.headers.get("ETag");
  return { status: response.status, ok: response.ok, body: parsed, text, etag } satisfies Answer;
}

/** A request to the proxy configuration API with the signed-in user's Basic credentials. */
export function proxyApi(method: string, path: string, options: Options = {}): Promise<Answer> {
  return send(proxyAuthorization, method, path, options);
}

/** A request to the rate limit service with its admin token. */
export function rateLimitApi(method: string, path: string, options: Options = {}): Promise<Answer> {
  return send(rateLimitAuthorization, method, path, options);
}

/** The reason an error answer gives: the proxy's `payload`, or the text. */
export function reasonOf(answer: Answer): string {
  if (answer.body && typeof answer.body === "object" && typeof answer.body.payload === "string")
    return answer.body.payload;
  return answer.text || `status ${answer.status}`;
}
