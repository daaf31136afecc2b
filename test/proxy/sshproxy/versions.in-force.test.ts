// GET /admin/sshproxy, what sshpiperd runs: the newest version as far as the installation still grants it, so that a
// grant removed or an address freed (a container moved, a project deleted) stops at once, before the next writesshprx.
import { describe, expect, it } from "vitest";
import { createJobRun } from "../../../src/jobs/history";
import type { SshAccount } from "../../../src/proxy/sshproxy/config";
import { writeSshProxyConfiguration } from "../../../src/proxy/sshproxy/versions";
import { as, asAdmin, createApiUser, createHost, createProject, expectJson } from "../../support/proxy-api";
import { db, KEY_ANNA, KEY_BEN } from "../../support/proxy-job-env";

const files = { upstreamKeyFile: "/etc/sshpiperd/upstream_key", knownHostsFile: "/etc/sshpiperd/known_hosts" };

async function write() {
  const runId = await createJobRun(db(), { kind: "writesshprx", trigger: "test" });
  return writeSshProxyConfiguration(db(), { runId, files, kept: 20, addressExceptions: [], now: new Date() });
}

const grant = (container: string, emails: string[]) =>
  expectJson(
    asAdmin(
      `/admin/containers/${container}/permissions`,
      "PUT",
      emails.map((userEmail) => ({ permission: "root", userEmail })),
    ),
    200,
  );

/** A project with container `web` at `ipv6`, on a host of its own, and the users anna and ben with their keys. */
async function seed(project: string, ipv6: string) {
  await createHost(`${project}-host.example`, ipv6.replace(/::[0-9a-f]+$/, "::1"));
  await createProject(project);
  const tenant = await createApiUser(`${project}-user`, [project]);
  for (const [email, sshPublicKey] of [
    [`anna@${project}.example`, KEY_ANNA],
    [`ben@${project}.example`, KEY_BEN],
  ]) {
    await expectJson(asAdmin("/admin/users", "POST", { email, sshPublicKey }), 200);
  }
  const body = { label: "web", hostname: `${project}-host.example`, ipv6 };
  await expectJson(as(tenant, `/containers/${project}`, "POST", body), 200);
  return tenant;
}

const inForce = () => expectJson(asAdmin("/admin/sshproxy"), 200);
const stored = (version: number) => expectJson(asAdmin(`/admin/sshproxy/versions/${version}`), 200);

describe("the SSH proxy configuration in force", () => {
  it("is the newest version as stored while the installation still grants all of it", async () => {
    await seed("ifa", "2001:db8:61::10");
    await grant("ifa/web", ["anna@ifa.example"]);
    const { version } = await write();
    const answer = await inForce();
    expect(answer).toEqual(await stored(version));
    expect(answer.accounts.map((a: SshAccount) => a.name)).toContain("ifa-web_root");
  });

  it("no longer leads a moved container's account to its old address, which another tenant then takes", async () => {
    const tenantA = await seed("ifb", "2001:db8:62::10");
    await createProject("ifc");
    const tenantB = await createApiUser("ifc-user", ["ifc"]);
    await grant("ifb/web", ["anna@ifb.example"]);
    const { version } = await write();
    const move = { label: "web", ipv6: "2001:db8:62::20" };
    expect((await expectJson(as(tenantA, "/containers/ifb", "POST", move), 200)).warnings).toHaveLength(1);
    const taken = { label: "app", hostname: "ifb-host.example", ipv6: "2001:db8:62::10" };
    await expectJson(as(tenantB, "/containers/ifc", "POST", taken), 200);

    const answer = await inForce();
    const old = await stored(version);
    expect(old.yaml).toContain('host: "[2001:db8:62::10]:22"');
    expect(answer).toEqual({
      ...old,
      digest: answer.digest,
      warnings: [...old.warnings, "WARN: ifb-web_root is left out: the installation no longer grants it"],
      accounts: old.accounts.filter((a: SshAccount) => a.project !== "ifb"),
      yaml: answer.yaml,
    });
    expect(answer.yaml).not.toContain("2001:db8:62::10");
    expect(answer.yaml).not.toContain("ifb-web_root");
    expect(answer.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(answer.digest).not.toBe(old.digest);
  });

  it("leaves out an account the administrator moved, and the users and keys the administrator revoked", async () => {
    await seed("ifd", "2001:db8:63::10");
    await seed("ife", "2001:db8:64::10");
    await grant("ifd/web", ["anna@ifd.example", "ben@ifd.example"]);
    await grant("ife/web", ["anna@ife.example"]);
    const { version } = await write();
    await grant("ifd/web", ["anna@ifd.example"]);
    await expectJson(asAdmin("/containers/ife", "POST", { label: "web", ipv6: "2001:db8:64::20" }), 200);

    const answer = await inForce();
    const old = await stored(version);
    expect(answer.warnings).toEqual([
      ...old.warnings,
      "WARN: ifd-web_root keeps only the users and keys the installation still grants (2 left out)",
      "WARN: ife-web_root is left out: it led to root@[2001:db8:64::10]:22, and the installation now leads it to root@[2001:db8:64::20]:22",
    ]);
    const ours = (accounts: SshAccount[]) => accounts.filter((a) => ["ifd", "ife"].includes(a.project));
    const revoked = ours(old.accounts)[0];
    expect(revoked.users).toEqual(["anna@ifd.example", "ben@ifd.example"]);
    expect(ours(answer.accounts)).toEqual([{ ...revoked, users: ["anna@ifd.example"], authorizedKeys: [KEY_ANNA] }]);
    const pipe = (name: string, keys: string) => `username: ${name}\n        authorized_keys_data: ${btoa(keys)}\n`;
    expect(old.yaml).toContain(pipe("ifd-web_root", `${KEY_ANNA}\n${KEY_BEN}\n`));
    expect(answer.yaml).toContain(pipe("ifd-web_root", `${KEY_ANNA}\n`));
    expect(old.yaml).toContain('host: "[2001:db8:64::10]:22"');
    expect(answer.yaml).not.toContain("2001:db8:64::");
  });

  it("leaves out the accounts of a deleted project's containers", async () => {
    await seed("iff", "2001:db8:65::10");
    await grant("iff/web", ["anna@iff.example"]);
    const { version } = await write();
    await expectJson(asAdmin("/admin/projects/iff", "DELETE"), 200);

    const answer = await inForce();
    expect(answer.version).toBe(version);
    expect(answer.accounts.filter((a: SshAccount) => a.project === "iff")).toEqual([]);
    expect(answer.warnings.at(-1)).toBe("WARN: iff-web_root is left out: the installation no longer grants it");
    expect(answer.yaml).not.toContain("2001:db8:65::10");
  });
});
