// A provided certificate serves only the projects it was provided for (issue 27, item 5): PUT /admin/certificates
// takes an optional `projects` list of labels; the generated configuration then maps it to those projects' domains
// only, and enableSSL sets certProvided only where it may serve. Without a list, every project's, as before.
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import rsaCert from "../fixtures/provided-rsa.cert.pem?raw";
import rsaKey from "../fixtures/provided-rsa.key.pem?raw";
import { asAdmin, createBackend, createHost, errorBody, expectJson } from "../../support/proxy-api";
import { createProjectWithContainers } from "../../support/proxy-fixtures";

const put = (name: string, body: Record<string, unknown>) =>
  asAdmin(`/admin/certificates/${name}`, "PUT", { certificatePem: rsaCert, privateKeyPem: rsaKey, ...body });
const sslOperation = (domainName: string, projectLabel: string) => ({
  operation: "CREATE",
  domainName,
  projectLabel,
  backendLabel: "web",
  enableSSL: true,
});
const certificateRows = () =>
  env.DB.prepare("select name, project_ids from certificates where source = 'provided' order by name")
    .all()
    .then((result) => result.results);
const flags = (domainName: string) =>
  env.DB.prepare("select cert_provided, public_ca_certificate from domains where domain_name = ?")
    .bind(domainName)
    .first();

beforeAll(async () => {
  await createHost("cp-host.hosts.example", "2001:db8:cf::1");
  for (const [project, address] of [
    ["cpalpha", "2001:db8:cf::a"],
    ["cpbeta", "2001:db8:cf::b"],
  ]) {
    const { app } = await createProjectWithContainers(project, "cp-host.hosts.example", { app: address });
    await createBackend(project, { label: "web", backendContainers: [{ containerId: app }] });
  }
});

// The configuration maps a certificate to every domain it may serve: each test starts from no domain or certificate.
beforeEach(async () => {
  await env.DB.batch([env.DB.prepare("delete from domains"), env.DB.prepare("delete from certificates")]);
});

/** The certificate for beta alone, then a domain it covers in each project. */
async function servedToBeta() {
  await expectJson(put("cp-rsa", { projects: ["cpbeta"] }), 200);
  await expectJson(
    asAdmin("/domains/massupdate", "POST", {
      domainOperations: [sslOperation("b.shop.example.org", "cpbeta"), sslOperation("a.shop.example.org", "cpalpha")],
    }),
    200,
  );
}

describe("PUT /admin/certificates with projects", () => {
  it("stores the projects and names them by label; a label no project has answers 400, storing nothing", async () => {
    const before = await certificateRows();
    expect(await expectJson(put("cp-missing", { projects: ["cpbeta", "nope"] }), 400)).toEqual(
      errorBody("projects: no project has the label nope"),
    );
    expect(await certificateRows()).toEqual(before);
    const stored = await expectJson(put("cp-rsa", { projects: ["cpbeta", "cpbeta"] }), 200);
    expect(stored).toMatchObject({ name: "cp-rsa", projects: ["cpbeta"] });
    const listed = await expectJson(asAdmin("/admin/certificates"), 200);
    expect(listed.find((row: { name: string }) => row.name === "cp-rsa").projects).toEqual(["cpbeta"]);
  });

  it("serves the certificate to those projects' domains only", async () => {
    await servedToBeta();
    // enableSSL: the provided certificate covers beta's name for beta only; alpha's asks the public CA.
    expect(await flags("b.shop.example.org")).toEqual({ cert_provided: 1, public_ca_certificate: 0 });
    expect(await flags("a.shop.example.org")).toEqual({ cert_provided: 0, public_ca_certificate: 1 });
    const preview = await expectJson(asAdmin("/admin/haproxy/preview"), 200);
    expect(preview.files["domain2cert.map"]).toContain("b.shop.example.org certs/cp-rsa.pem");
    expect(preview.files["domain2cert.map"]).not.toContain("a.shop.example.org");
    // The https bind offers it for beta's name alone, not for alpha's it covers.
    expect(preview.files["crt-list.txt"]).toContain("\ncerts/cp-rsa.pem b.shop.example.org\n");
    expect(preview.certificates).toContainEqual({ file: "certs/cp-rsa.pem", name: "cp-rsa" });
  });

  it("serves every project again once stored without a list, as before", async () => {
    await servedToBeta();
    const stored = await expectJson(put("cp-rsa", {}), 200);
    expect(stored).not.toHaveProperty("projects");
    expect(await certificateRows()).toContainEqual({ name: "cp-rsa", project_ids: null });
    const preview = await expectJson(asAdmin("/admin/haproxy/preview"), 200);
    expect(preview.files["domain2cert.map"]).toContain("a.shop.example.org certs/cp-rsa.pem");
    expect(preview.files["domain2cert.map"]).toContain("b.shop.example.org certs/cp-rsa.pem");
    expect(preview.files["crt-list.txt"]).toContain("\ncerts/cp-rsa.pem a.shop.example.org b.shop.example.org\n");
  });
});
