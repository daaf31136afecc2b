// Shared setup of the configuration job tests (test/proxy/jobs.*.test.ts): the deployed project "jobs" they start
// from, with the SSH permissions writesshprx turns into accounts and an API user matching the project.
import { asAdmin, createApiUser, expectJson } from "../support/proxy-api";
import { createDeployedProject } from "../support/proxy-fixtures";

/**
 * The project "jobs" (see createDeployedProject; web2 is a backup server), carl without an SSH key, and www-data and
 * root on web1 for anna, ben and carl; returns the credentials of the API user jobrunner, who matches the project.
 */
export async function createJobsProject(): Promise<string> {
  await createDeployedProject("jobs", "backup");
  await expectJson(asAdmin("/admin/users", "POST", { email: "carl@example.com" }), 200);
  await expectJson(
    asAdmin("/admin/containers/jobs/web1/permissions", "PUT", [
      { permission: "www-data", userEmail: "ben@example.com" },
      { permission: "www-data", userEmail: "anna@example.com" },
      { permission: "root", userEmail: "anna@example.com" },
      { permission: "root", userEmail: "carl@example.com" },
    ]),
    200,
  );
  return createApiUser("jobrunner", ["jobs"]);
}
