// The administrator's job, version, operation, certificate and zone routes refused exactly: an API user (even one
// whose patterns match every project) gets 403 and a caller without credentials 401 with the realm's challenge, on
// versions, certificates and zones that exist, and none of their calls changes a stored row.
import { beforeAll, describe, expect, it } from "vitest";
import { expectJson } from "../../support/proxy-api";
import { withVars } from "../../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../../support/silent-console";
import {
  CERTIFICATE,
  CHALLENGE,
  createMatchingAllUser,
  createTargets,
  FORBIDDEN,
  sendCall,
  storedRows,
  type TableCall,
  type Targets,
  UNAUTHENTICATED,
} from "./refusals-fixtures";

let matchingAll: string;
let targets: Targets;

beforeAll(async () => {
  targets = await createTargets("refused-cert", "refused.example");
  matchingAll = await createMatchingAllUser("refusedeverywhere");
});

silenceConsoleAndRestoreMocks();

const adminCalls: TableCall[] = [
  ["GET", "/admin/jobs"],
  ["GET", "/admin/haproxy"],
  ["GET", "/admin/haproxy/status"],
  ["GET", "/admin/haproxy/preview"],
  ["GET", "/admin/haproxy/versions"],
  ["GET", "/admin/haproxy/versions/{haproxy}"],
  ["POST", "/admin/haproxy/versions/{haproxy}/activate"],
  ["GET", "/admin/sshproxy"],
  ["GET", "/admin/sshproxy/preview"],
  ["GET", "/admin/sshproxy/versions"],
  ["GET", "/admin/sshproxy/versions/{ssh}"],
  ["POST", "/admin/sshproxy/versions/{ssh}/activate"],
  ["GET", "/admin/certificates"],
  ["PUT", "/admin/certificates/refused-cert", CERTIFICATE],
  ["PUT", "/admin/certificates/refused-new", CERTIFICATE],
  ["DELETE", "/admin/certificates/refused-cert"],
  ["PUT", "/admin/zones/refused.example", { projectLabel: "ops" }],
  ["PUT", "/admin/zones/refused-new.example", { projectLabel: "ops" }],
  ["DELETE", "/admin/zones/refused.example"],
];

const send = (auth: string | null, call: TableCall) => sendCall(withVars(), auth, call, targets);

describe("the administrator's job, version, operation, certificate and zone routes", () => {
  for (const call of adminCalls) {
    const [method, path] = call;

    it(`${method} ${path} answers 403 to an API user matching every project`, async () => {
      const response = await send(matchingAll, call);
      expect(response.headers.get("WWW-Authenticate")).toBeNull();
      expect(await expectJson(response, 403)).toEqual(FORBIDDEN);
    });

    it(`${method} ${path} answers 401 with the realm's challenge without credentials`, async () => {
      const response = await send(null, call);
      expect(response.headers.get("WWW-Authenticate")).toBe(CHALLENGE);
      expect(await expectJson(response, 401)).toEqual(UNAUTHENTICATED);
    });
  }

  it("change nothing when refused, whoever calls", async () => {
    const before = await storedRows();
    for (const call of adminCalls) {
      await expectJson(send(matchingAll, call), 403);
      await expectJson(send(null, call), 401);
    }
    expect(await storedRows()).toEqual(before);
    expect(before.certificates.map((row) => row.name)).toContain("refused-cert");
    expect(before.certificates.map((row) => row.name)).not.toContain("refused-new");
    expect(before.zones.map((row) => row.name)).toEqual(["refused.example"]);
  });
});
