// Small request helpers for route tests that go through the Worker's real fetch handler.
import { exports } from "cloudflare:workers";

export const basic = (username: string, password: string) => `Basic ${btoa(`${username}:${password}`)}`;

export const ADMIN_AUTH = basic("admin", "test-admin-password");

export function call(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(`http://example.com${path}`, init);
}

export function callJson(path: string, method: string, body: unknown, headers: Record<string, string> = {}) {
  return call(path, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** POST with `fields` as an application/x-www-form-urlencoded body, as an HTML form sends them. */
export function postForm(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return call(path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}
