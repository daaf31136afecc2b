// GET /projects/{projectLabel}/deployment refused exactly: another tenant's project answers the very 404 of a project
// that does not exist, as every other project route answers it, so that a tenant learns neither that the project
// exists nor anything of the version in force; without credentials, 401 with the realm's challenge.
import { beforeAll, describe, expect, it } from "vitest";
import { as, asAdmin, call, createApiUser, createProject, errorBody, expectJson } from "../../support/proxy-api";
import { withVars } from "../../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../../support/silent-console";
import { createOpsProject, generate } from "./operations-helpers";
import { CHALLENGE, UNAUTHENTICATED } from "./refusals-fixtures";

const invalidProject = (label: string) => errorBody(`Invalid project: label ${label} not existing or access denied`);

let owner: string;
let outsider: string;

// The project ops deployed in a version in force, its tenant, and a tenant of another project only.
beforeAll(async () => {
  ({ apiUser: owner } = await createOpsProject());
  await createProject("rival");
  outsider = await createApiUser("rivaluser", ["rival"]);
  await generate(withVars());
});

silenceConsoleAndRestoreMocks();

describe("GET /projects/{projectLabel}/deployment", () => {
  it("answers the project's own tenant and the administrator", async () => {
    const { version } = await expectJson(asAdmin("/admin/haproxy"), 200);
    expect(await expectJson(as(owner, "/projects/ops/deployment"), 200)).toEqual({ version, problems: [] });
    expect(await expectJson(asAdmin("/projects/ops/deployment"), 200)).toEqual({ version, problems: [] });
  });

  it("answers another tenant's project with the 404 of a project that does not exist", async () => {
    const forbidden = await as(outsider, "/projects/ops/deployment");
    const missing = await as(outsider, "/projects/nosuch/deployment");
    expect(await expectJson(forbidden, 404)).toEqual(invalidProject("ops"));
    expect(await expectJson(missing, 404)).toEqual(invalidProject("nosuch"));
    expect(forbidden.headers.get("WWW-Authenticate")).toBeNull();
    // The administrator's answer for a project that does not exist is the same.
    expect(await expectJson(asAdmin("/projects/nosuch/deployment"), 404)).toEqual(invalidProject("nosuch"));
  });

  it("answers as the other project routes answer another tenant's project", async () => {
    for (const path of ["/projects/ops", "/domains/ops", "/domains/ops/www", "/projects/ops/deployment"])
      expect(await expectJson(as(outsider, path), 404)).toEqual(invalidProject("ops"));
  });

  it("answers 401 with the realm's challenge without credentials", async () => {
    const response = await call("/projects/ops/deployment");
    expect(response.headers.get("WWW-Authenticate")).toBe(CHALLENGE);
    expect(await expectJson(response, 401)).toEqual(UNAUTHENTICATED);
  });
});
