// The job routes any authenticated caller may start, refused exactly to a caller without valid credentials: 401 with
// the realm's challenge, and no run recorded, no message queued, no lock taken, no version stored, no audit entry.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { CONFIG_LOCK, MAINTENANCE_LOCK } from "../../../src/proxy/jobs";
import { basic, expectJson, rowsOf } from "../../support/proxy-api";
import { callWith, locks, withVars } from "../../support/proxy-job-env";
import { createDeployedProject } from "../../support/proxy-fixtures";
import { silenceConsoleAndRestoreMocks } from "../../support/silent-console";
import { CHALLENGE, UNAUTHENTICATED } from "./refusals-fixtures";

/** What a started job leaves: its run, the versions it stores, the audit entry of its start. */
const stored = async () => ({
  runs: await rowsOf("select * from job_runs order by id"),
  haproxy: await rowsOf("select * from haproxy_versions order by id"),
  sshProxy: await rowsOf("select * from ssh_proxy_versions order by id"),
  audit: await rowsOf("select * from audit_log order by id"),
});

// A project each job would have work to do for: two containers, backends with domains, users with SSH keys.
beforeAll(async () => {
  await createDeployedProject("refusedjobs");
});

silenceConsoleAndRestoreMocks();

const callers: [string, string | null][] = [
  ["no credentials", null],
  ["the administrator's name with a wrong password", basic("admin", "not-the-password")],
  ["an unknown user", basic("nobody", "nobody-password")],
  ["a bearer token instead of Basic credentials", "Bearer test-admin-password"],
];

describe("starting a job without valid credentials", () => {
  for (const path of ["/admin/gensynchaprx", "/admin/writesshprx", "/maintenance/start"]) {
    for (const [who, auth] of callers) {
      it(`GET ${path} with ${who} answers 401 and starts nothing`, async () => {
        const send = vi.spyOn(env.JOBS, "send");
        const sendBatch = vi.spyOn(env.JOBS, "sendBatch");
        const fetch = vi.spyOn(globalThis, "fetch");
        const before = await stored();

        const response = await callWith(withVars(), path, auth);
        expect(response.headers.get("WWW-Authenticate")).toBe(CHALLENGE);
        expect(response.headers.get("X-Job-Id")).toBeNull();
        expect(await expectJson(response, 401)).toEqual(UNAUTHENTICATED);

        expect(await stored()).toEqual(before);
        expect(send).not.toHaveBeenCalled();
        expect(sendBatch).not.toHaveBeenCalled();
        expect(fetch).not.toHaveBeenCalled();
        expect(await locks().inspect(CONFIG_LOCK)).toBeNull();
        expect(await locks().inspect(MAINTENANCE_LOCK)).toBeNull();
      });
    }
  }
});
