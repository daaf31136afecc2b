// Shared setup of the domain route tests: the projects dom and dom2 most cases write to, a domain operation and a mass
// update built in one call, and what the API and the table then hold.
import { env } from "cloudflare:workers";
import { ADMIN_AUTH, asAdmin, createBackend, createProject, expectJson, massUpdate } from "../../support/proxy-api";

export type Operation = {
  operation: string;
  domainName: string;
  projectLabel: string;
  backendLabel: string;
  enableSSL?: boolean;
  redirectToUrl?: string;
};
/** A domain operation, on backend web of project dom unless told otherwise. */
export const op = (
  operation: string,
  domainName: string,
  backendLabel = "web",
  projectLabel = "dom",
  extra: Partial<Operation> = {},
): Operation => ({
  operation,
  domainName,
  projectLabel,
  backendLabel,
  ...extra,
});
/** A mass update as the administrator, with fullSync only when given. */
export const update = (operations: Operation[], fullSync?: boolean) =>
  massUpdate(ADMIN_AUTH, { ...(fullSync !== undefined && { fullSync }), domainOperations: operations });
/** GET /domains/{p}, answered 200. */
export const domainsOf = (project = "dom") => expectJson(asAdmin(`/domains/${project}`), 200);
/** Every domain row, to compare before and after a refused request. */
export const allDomains = async () =>
  (
    await env.DB.prepare(
      "select domain_name, backend_id, public_ca_certificate, cert_provided, redirect_to_url, version from domains order by domain_name",
    ).all()
  ).results;

/** Project dom (backends web, api and permredirect) and project dom2 (backend web), without domains. */
export async function createDomainProjects() {
  await createProject("dom");
  await createProject("dom2");
  await createBackend("dom", { label: "web" });
  await createBackend("dom", { label: "api" });
  await createBackend("dom", { label: "permredirect" });
  await createBackend("dom2", { label: "web" });
}
