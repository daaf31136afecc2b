// Shared setup of the proxy's refusal tests: the exact refusals on the wire, written here once (not imported from src,
// so that a change of their words fails a test), an API user matching every project, what the refused calls aim at (a
// HAProxy version, an SSH proxy version, a provided certificate, a zone of project ops), requests through the Worker
// with a chosen env, and a snapshot of every row those calls could write.
import { createExecutionContext } from "cloudflare:test";
import worker from "../../../src/index";
import { createJobRun } from "../../../src/jobs/history";
import { writeSshProxyConfiguration } from "../../../src/proxy/sshproxy/versions";
import rsaCert from "../fixtures/provided-rsa.cert.pem?raw";
import rsaKey from "../fixtures/provided-rsa.key.pem?raw";
import { asAdmin, createApiUser, errorBody, expectJson, rowsOf } from "../../support/proxy-api";
import { db } from "../../support/proxy-job-env";
import { createOpsProject, generate } from "./operations-helpers";

/** An API user's answer on an administrator's route. */
export const FORBIDDEN = errorBody("Administrator access required");
/** The answer without valid credentials, with CHALLENGE in WWW-Authenticate. */
export const UNAUTHENTICATED = errorBody("Authentication required: valid HTTP Basic credentials are needed");
/** The realm of every challenge the proxy sends, Basic or Bearer. */
export const REALM = "agiprx";
export const CHALLENGE = `Basic realm="${REALM}"`;

/** A slave instance's answer (405) to a write, and to a started job (in the original's words). */
export const SLAVE_WRITE = errorBody("This is a slave instance: writes and jobs must go to the master instance");
export const SLAVE_JOB = errorBody("Job needs to be started on master instance (this is a slave instance)");

/**
 * The Basic credentials of a new API user `username` whose pattern matches every project: the most a tenant can be,
 * and still no administrator.
 */
export const createMatchingAllUser = (username: string) => createApiUser(username, [".*"]);

/** A valid body of PUT /admin/certificates/{name}. */
export const CERTIFICATE = { certificatePem: rsaCert, privateKeyPem: rsaKey };

export interface Targets {
  haproxyVersion: number;
  sshProxyVersion: number;
}

/**
 * The project ops (createOpsProject) with a HAProxy version and an SSH proxy version stored, the provided certificate
 * `certificate` and the zone `zone` of ops: what the refused calls would have read or changed.
 */
export async function createTargets(certificate: string, zone: string): Promise<Targets> {
  await createOpsProject();
  const haproxyVersion = (await generate()).version;
  const runId = await createJobRun(db(), { kind: "writesshprx", trigger: "test" });
  const files = { upstreamKeyFile: "/etc/sshpiperd/upstream_key", knownHostsFile: "/etc/sshpiperd/known_hosts" };
  const ssh = await writeSshProxyConfiguration(db(), {
    runId,
    files,
    kept: 20,
    addressExceptions: [],
    now: new Date(),
  });
  await expectJson(asAdmin(`/admin/certificates/${certificate}`, "PUT", CERTIFICATE), 200);
  await expectJson(asAdmin(`/admin/zones/${zone}`, "PUT", { projectLabel: "ops" }), 200);
  return { haproxyVersion, sshProxyVersion: ssh.version };
}

/** One call of a table: method, path ({haproxy} and {ssh} stand for the versions of Targets), a write's body. */
export type TableCall = [method: string, path: string, body?: unknown];

/**
 * The call through the Worker with `workerEnv` (a fresh object: settings are memoised per env object), as `auth`
 * (null: no credentials), with its JSON body when it has one.
 */
export function sendCall(workerEnv: Env, auth: string | null, [method, path, body]: TableCall, targets: Targets) {
  const headers: Record<string, string> = auth ? { Authorization: auth } : {};
  if (body !== undefined) headers["content-type"] = "application/json";
  const resolved = path
    .replace("{haproxy}", String(targets.haproxyVersion))
    .replace("{ssh}", String(targets.sshProxyVersion));
  const init = { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) };
  return worker.fetch(new Request(`http://example.com${resolved}`, init), workerEnv, createExecutionContext());
}

/** Every row the administrator's writes and jobs write: zones, certificates, versions, job runs, audit entries. */
export const storedRows = async () => ({
  zones: await rowsOf("select * from zones order by id"),
  certificates: await rowsOf("select * from certificates order by id"),
  haproxy: await rowsOf("select * from haproxy_versions order by id"),
  sshProxy: await rowsOf("select * from ssh_proxy_versions order by id"),
  runs: await rowsOf("select * from job_runs order by id"),
  audit: await rowsOf("select * from audit_log order by id"),
});
