// Helpers for rate limit service tests: admin calls to install a runtime configuration, and /json calls.
import { Code, ConnectError } from "@connectrpc/connect";
import { call, callJson } from "./worker-http";

export const RATELIMIT_ADMIN = { Authorization: "Bearer test-ratelimit-admin-token" };

export async function putConfig(files: Record<string, string>): Promise<Response> {
  return callJson("/rlconfig/files", "PUT", { files }, RATELIMIT_ADMIN);
}

export async function installConfig(files: Record<string, string>): Promise<void> {
  const response = await putConfig(files);
  if (response.status !== 200) throw new Error(`config refused: ${response.status} ${await response.text()}`);
}

export const descriptor = (...pairs: [string, string][]) => ({
  entries: pairs.map(([key, value]) => ({ key, value })),
});

export async function rateLimit(body: unknown): Promise<{ status: number; body: any; contentType: string | null }> {
  const response = await callJson("/json", "POST", body);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, body: parsed, contentType: response.headers.get("content-type") };
}

export { call };

export { parseStats, statDelta } from "../support/ratelimit-stats-page";

/** The Connect error code and message a call failed with (the call must fail). */
export async function connectErrorOf(promise: Promise<unknown>): Promise<{ code: Code; message: string }> {
  try {
    await promise;
  } catch (error) {
    const connectError = ConnectError.from(error);
    return { code: connectError.code, message: connectError.rawMessage };
  }
  throw new Error("the call succeeded");
}
