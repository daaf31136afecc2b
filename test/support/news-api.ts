// Helpers for the news API tests: sign-up through the real routes, bearer headers, and interception of the
// Worker's outbound fetch with recorded publisher responses.
import { expect, vi } from "vitest";
import { call, callJson } from "./worker-http";

export const MASTER_KEY = "test-master-key";
export const JWT_SECRET = "test-jwt-secret-0123456789abcdef";

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

const BEARER = 'Bearer realm="Users"';
const unauthorized = (param: string, message: string) => ({ valid: false, name: "unauthorized", param, message });

/** The news API's 401s: one body and challenge per check, whatever failed. */
export const REFUSED = {
  masterKey: {
    challenge: BEARER,
    body: unauthorized("access_token", "access_token must be the master key (a Bearer token or access_token)"),
  },
  token: {
    challenge: BEARER,
    body: unauthorized(
      "access_token",
      "access_token must be a valid session token of a user allowed here (a Bearer token or access_token)",
    ),
  },
  login: {
    challenge: 'Basic realm="Users"',
    body: unauthorized("authorization", "authorization must carry the e-mail and password of a user (HTTP Basic)"),
  },
};

/** 401 with the refusal's challenge and JSON body. */
export async function expectRefused(response: Response, refusal: (typeof REFUSED)[keyof typeof REFUSED]) {
  expect(response.status).toBe(401);
  expect(response.headers.get("WWW-Authenticate")).toBe(refusal.challenge);
  expect(response.headers.get("content-type")).toBe("application/json");
  expect(await response.json()).toEqual(refusal.body);
}

/** The news API's 404 for an id that names no record. */
export const UNKNOWN_ID = { valid: false, name: "exists", param: "id", message: "id names no record" };

export interface SignedUp {
  token: string;
  user: { id: string; email: string; name: string; picture: string; role: string; createdAt: string };
}

/** Creates a user through POST /users with the master key and returns its token and full view. */
export async function signUp(
  email: string,
  options: { password?: string; role?: "user" | "admin"; name?: string } = {},
): Promise<SignedUp> {
  const response = await callJson("/users", "POST", {
    access_token: MASTER_KEY,
    email,
    password: options.password ?? "secret-123",
    ...options,
  });
  if (response.status !== 201)
    throw new Error(`sign-up of ${email} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as SignedUp;
}

export function getJson(path: string, token: string): Promise<Response> {
  return call(path, { headers: bearer(token) });
}

export interface RecordedResponse {
  status?: number;
  body: string;
  contentType?: string;
}

/**
 * Replaces the global fetch (what the Worker's code calls for outbound requests) with recorded responses chosen by
 * URL prefix. Any other URL fails the request, so a test cannot reach the network by accident. Returns the spy
 * (its calls list every URL requested); call mockRestore() after the test.
 */
export function interceptFetch(routes: Record<string, RecordedResponse | ((url: URL) => RecordedResponse)>) {
  return vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const prefix = Object.keys(routes)
      .filter((candidate) => url.href.startsWith(candidate))
      .sort((a, b) => b.length - a.length)[0];
    if (prefix === undefined) throw new TypeError(`unexpected outbound fetch to ${url.origin}${url.pathname}`);
    const route = routes[prefix];
    const recorded = typeof route === "function" ? route(url) : route;
    return new Response(recorded.body, {
      status: recorded.status ?? 200,
      headers: { "content-type": recorded.contentType ?? "application/json; charset=utf-8" },
    });
  });
}

/** The URLs a fetch spy was called with. */
export const requestedUrls = (spy: ReturnType<typeof interceptFetch>) =>
  spy.mock.calls.map(([input]) => new URL(input instanceof Request ? input.url : String(input)));

/** The 400 answers of a list route for each malformed `limit` or `page` (the paging every news list shares). */
export const PAGING_REFUSALS: [string, Record<string, unknown>][] = [
  [
    "?limit=0",
    {
      valid: false,
      name: "min",
      param: "limit",
      value: 0,
      min: 1,
      message: "limit must be greater than or equal to 1",
    },
  ],
  [
    "?limit=101",
    {
      valid: false,
      name: "max",
      param: "limit",
      value: 101,
      max: 100,
      message: "limit must be lower than or equal to 100",
    },
  ],
  [
    "?page=0",
    {
      valid: false,
      name: "min",
      param: "page",
      value: 0,
      min: 1,
      message: "page must be greater than or equal to 1",
    },
  ],
  [
    "?limit=many",
    { valid: false, name: "type", param: "limit", value: "many", type: "number", message: "limit must be a number" },
  ],
];
