// Shared setup of the "operations" route tests: the deployed project "ops" they all start from, calls through the
// Worker with a chosen env, a stand-in for the agents on outbound fetch, and the writes they put back.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import worker from "../../../src/index";
import { ADMIN_AUTH, asAdmin, createApiUser, expectJson } from "../../support/proxy-api";
import { createDeployedProject } from "../../support/proxy-fixtures";
import { withVars } from "../../support/proxy-job-env";

export const SLAVE = "http://slave-1.test:9400";

/** A request through the Worker with `workerEnv`, as the administrator unless `auth` says otherwise (null: nobody). */
export async function callWith(
  workerEnv: Env,
  path: string,
  options: { auth?: string | null; method?: string } = {},
): Promise<Response> {
  const auth = options.auth === undefined ? ADMIN_AUTH : options.auth;
  const headers: Record<string, string> = auth ? { Authorization: auth } : {};
  return worker.fetch(
    new Request(`http://example.com${path}`, { method: options.method ?? "GET", headers }),
    workerEnv,
    createExecutionContext(),
  );
}

export interface AgentCall {
  url: string;
  method: string;
  authorization: string | null;
  body?: { version?: number; digest: string; files: Record<string, string> };
}

/** Answers outbound fetches as the agents would; records each call. */
export function fakeAgents(answer: (call: AgentCall) => Response | Promise<Response>) {
  const calls: AgentCall[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init as RequestInit);
    const text = await request.text();
    const call: AgentCall = {
      url: request.url,
      method: request.method,
      authorization: request.headers.get("Authorization"),
      body: text ? JSON.parse(text) : undefined,
    };
    calls.push(call);
    return answer(call);
  });
  return calls;
}

/** An agent that accepts every check (POST /v1/check) and applies every push. */
export const applied = (call: AgentCall) =>
  Response.json(call.url.endsWith("/v1/check") ? { valid: true } : { outcome: "applied", version: 1 });

/**
 * The project "ops" (see createDeployedProject) with anna holding www-data on web1, and the API user opsuser matching
 * it; returns that user's credentials and the FQLabel of backend www.
 */
export async function createOpsProject(): Promise<{ apiUser: string; wwwFqLabel: string }> {
  await createDeployedProject("ops");
  await expectJson(
    asAdmin("/admin/containers/ops/web1/permissions", "PUT", [
      { permission: "www-data", userEmail: "anna@example.com" },
    ]),
    200,
  );
  const apiUser = await createApiUser("opsuser", ["ops"]);
  const wwwFqLabel = (await expectJson(asAdmin("/projects/ops"), 200)).backends.find(
    (backend: { label: string }) => backend.label === "www",
  ).FQLabel;
  return { apiUser, wwwFqLabel };
}

/** Runs gensynchaprx with `workerEnv`; returns the version then in force. */
export const generate = async (workerEnv = withVars()) => {
  const response = await callWith(workerEnv, "/admin/gensynchaprx");
  await expectJson(response, 200);
  return (await expectJson(callWith(withVars(), "/admin/haproxy"), 200)) as {
    version: number;
    digest: string;
    files: Record<string, string>;
  };
};

/** One domain operation on project ops, as the administrator. */
export const massUpdate = (operation: Record<string, unknown>) =>
  expectJson(
    asAdmin("/domains/massupdate", "POST", { domainOperations: [{ projectLabel: "ops", ...operation }] }),
    200,
  );

/**
 * Storage is shared by the tests of a file: each puts back what it changed in the installation, and those that need
 * a clean slate (no version, no certificate, no run) make it with this.
 */
export async function forgetGenerations() {
  await env.DB.batch(
    ["haproxy_version_files", "haproxy_versions", "certificates", "job_runs"].map((table) =>
      env.DB.prepare(`delete from ${table}`),
    ),
  );
}

/** Deletes a domain of backend www that a test created. */
export const removeDomain = (domainName: string) =>
  massUpdate({ operation: "DELETE", domainName, backendLabel: "www" });
