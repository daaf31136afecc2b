// What the rate limit integration suites do against a `wrangler dev` of the Worker before they count: the admin
// token they start it with, a configuration installed through PUT /rlconfig/files, and the day-window key's start.

import { expect } from "vitest";

export const ADMIN_TOKEN = "integration-admin-token";
export const ADMIN = { Authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };

/** A configuration of one rule: `key` limited to `perDay` requests a day in `domain`. */
export const dailyLimitConfig = (domain: string, key: string, perDay: number) =>
  `domain: ${domain}\ndescriptors:\n  - key: ${key}\n    rate_limit:\n      unit: day\n      requests_per_unit: ${perDay}\n`;

/** Installs these configuration files; the Worker must answer 200. */
export async function installFiles(server: { url: string }, files: Record<string, string>): Promise<void> {
  const response = await fetch(`${server.url}/rlconfig/files`, {
    method: "PUT",
    headers: ADMIN,
    body: JSON.stringify({ files }),
  });
  expect(response.status).toBe(200);
}

/** The start of the current UTC day in seconds: the window a day-unit counter's key ends with. */
export const dayStart = () => Math.floor(Date.now() / 86_400_000) * 86_400;
