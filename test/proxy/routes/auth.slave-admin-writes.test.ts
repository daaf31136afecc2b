// A slave instance refuses the administrator's zone and certificate writes and the rollbacks with the 405 of every
// write (the job starts answer the original's words instead: jobs.locks.test.ts), changing nothing; credentials and
// the administrator's role are checked before the instance's role.
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN_AUTH, asAdmin, expectJson } from "../../support/proxy-api";
import { withVars } from "../../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../../support/silent-console";
import {
  CERTIFICATE,
  CHALLENGE,
  createMatchingAllUser,
  createTargets,
  FORBIDDEN,
  sendCall,
  SLAVE_WRITE,
  storedRows,
  type TableCall,
  type Targets,
  UNAUTHENTICATED,
} from "./refusals-fixtures";

let tenant: string;
let targets: Targets;

// Each write would succeed on the master: the zone, the certificate and both versions exist, the bodies are valid.
beforeAll(async () => {
  targets = await createTargets("slave-cert", "slave.example");
  tenant = await createMatchingAllUser("slavetenant");
});

silenceConsoleAndRestoreMocks();

const writes: TableCall[] = [
  ["PUT", "/admin/zones/slave.example", { projectLabel: "ops" }],
  ["PUT", "/admin/zones/new-slave.example", { projectLabel: "ops" }],
  ["DELETE", "/admin/zones/slave.example"],
  ["PUT", "/admin/certificates/slave-cert", CERTIFICATE],
  ["PUT", "/admin/certificates/new-slave-cert", CERTIFICATE],
  ["DELETE", "/admin/certificates/slave-cert"],
  ["POST", "/admin/sshproxy/versions/{ssh}/activate"],
  ["POST", "/admin/haproxy/versions/{haproxy}/activate"],
];

const onSlave = (auth: string | null, call: TableCall) =>
  sendCall(withVars({ INSTANCE_ROLE: "slave" }), auth, call, targets);

describe("the administrator's writes on a slave instance", () => {
  for (const call of writes) {
    const [method, path] = call;

    it(`${method} ${path} answers the administrator 405 and changes nothing`, async () => {
      const before = await storedRows();
      const response = await onSlave(ADMIN_AUTH, call);
      expect(response.headers.get("X-Job-Id")).toBeNull();
      expect(await expectJson(response, 405)).toEqual(SLAVE_WRITE);
      expect(await storedRows()).toEqual(before);
    });

    it(`${method} ${path} answers an API user 403 before the instance's role`, async () => {
      expect(await expectJson(onSlave(tenant, call), 403)).toEqual(FORBIDDEN);
    });

    it(`${method} ${path} answers 401 with the realm's challenge without credentials`, async () => {
      const response = await onSlave(null, call);
      expect(response.headers.get("WWW-Authenticate")).toBe(CHALLENGE);
      expect(await expectJson(response, 401)).toEqual(UNAUTHENTICATED);
    });
  }

  it("leave the zone and the certificate in place", async () => {
    for (const call of writes) await expectJson(onSlave(ADMIN_AUTH, call), 405);
    expect(await expectJson(asAdmin("/admin/zones"), 200)).toEqual([
      { name: "slave.example", projectLabel: "ops", version: 0 },
    ]);
    const names = (await expectJson(asAdmin("/admin/certificates"), 200)).map((row: { name: string }) => row.name);
    expect(names).toContain("slave-cert");
    expect(names).not.toContain("new-slave-cert");
  });
});
