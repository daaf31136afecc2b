// Shared setup for the proxy API tests: calls as the administrator or an API user, and seeding through the API.
import { env } from "cloudflare:workers";
import { expectStatus } from "./expect-status";
import { ADMIN_AUTH, basic, call, callJson } from "./worker-http";

export { ADMIN_AUTH, basic, call, callJson };

export const asAdmin = (path: string, method = "GET", body?: unknown) =>
  body === undefined
    ? call(path, { method, headers: { Authorization: ADMIN_AUTH } })
    : callJson(path, method, body, { Authorization: ADMIN_AUTH });

export const as = (auth: string, path: string, method = "GET", body?: unknown) =>
  body === undefined
    ? call(path, { method, headers: { Authorization: auth } })
    : callJson(path, method, body, { Authorization: auth });

/** Expects the status and returns the parsed JSON body. */
export async function expectJson(response: Response | Promise<Response>, status: number): Promise<any> {
  const resolved = await response;
  const text = await resolved.text();
  expectStatus({ status: resolved.status, body: text }, status);
  return JSON.parse(text);
}

export const errorBody = (payload: string) => ({ success: false, payload, warnings: [] });

export async function createProject(label: string, fullname?: string) {
  return expectJson(asAdmin("/admin/projects", "POST", { label, ...(fullname && { fullname }) }), 200);
}

export async function createHost(hostname: string, ipv6: string) {
  return expectJson(asAdmin("/admin/hosts", "POST", { hostname, ipv6 }), 200);
}

/** Creates an API user and returns its Authorization header. */
export async function createApiUser(username: string, projectPatterns: string[], password = `${username}-password`) {
  await expectJson(asAdmin("/admin/apiusers", "POST", { username, password, projectPatterns }), 200);
  return basic(username, password);
}

export async function createContainer(project: string, body: Record<string, unknown>): Promise<number> {
  const result = await expectJson(asAdmin(`/containers/${project}`, "POST", body), 200);
  return result.payload.value;
}

export async function createBackend(project: string, body: Record<string, unknown>): Promise<number> {
  const result = await expectJson(asAdmin(`/backends/${project}`, "POST", body), 200);
  return result.payload.value;
}

export const massUpdate = (auth: string, body: unknown) => as(auth, "/domains/massupdate", "POST", body);

/** The rows a query reads from D1: what a test compares before and after a write that must change nothing. */
export const rowsOf = (query: string) =>
  env.DB.prepare(query)
    .all()
    .then((result) => result.results);
