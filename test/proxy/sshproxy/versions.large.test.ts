// An SSH proxy version larger than one D1 row may hold (2,000,000 bytes): its accounts and sshpiperd file are stored
// in pieces and read back whole, so writesshprx keeps working at the installation's size; a missing file is an error.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createJobRun } from "../../../src/jobs/history";
import { getSshProxyVersion, writeSshProxyConfiguration } from "../../../src/proxy/sshproxy/versions";
import { database } from "../../../src/shared/db";
import { createProjectOnHost } from "../../support/proxy-fixtures";

const db = () => database(env.DB);
const files = { upstreamKeyFile: "/etc/sshpiperd/upstream_key", knownHostsFile: "/etc/sshpiperd/known_hosts" };

/** 120 more containers beside `containerId`, each granting `root` to one user whose key is 14 KB long. */
async function largeInstallation(containerId: number, key: string) {
  const numbers = JSON.stringify(Array.from({ length: 120 }, (_, i) => i));
  await env.DB.batch([
    env.DB.prepare(
      "insert into containers (project_id, label, host_id, ipv6) " +
        "select c.project_id, 'c' || n.value, c.host_id, '2001:db8::e:' || printf('%x', n.value) " +
        "from containers c, json_each(?) n where c.id = ?",
    ).bind(numbers, containerId),
    env.DB.prepare("insert into users (email, ssh_public_key) values ('big@example.com', ?)").bind(key),
    env.DB.prepare(
      "insert into container_permissions (container_id, user_id, permission) " +
        "select c.id, u.id, 'root' from containers c, users u " +
        "where u.email = 'big@example.com' and c.project_id = (select project_id from containers where id = ?)",
    ).bind(containerId),
  ]);
}

describe("a large SSH proxy version", () => {
  it("stores 121 accounts of a 14 KB key (4 MB with the file) and reads them back whole", async () => {
    const { web } = await createProjectOnHost("large", {
      hostname: "large-node.example.net",
      ipv6: "2001:db8::e",
      containers: { web: "2001:db8::e:ffff" },
    });
    const key = `ssh-ed25519 AAAA${"B".repeat(14_000)} big@desk`;
    await largeInstallation(web, key);
    const runId = await createJobRun(db(), { kind: "writesshprx", trigger: "test" });
    const input = { runId, files, kept: 20, addressExceptions: [], now: new Date() };
    const { version, warnings } = await writeSshProxyConfiguration(db(), input);
    expect(warnings).toEqual([`INFO: SSH proxy version ${version}: 121 accounts`]);

    const stored = await getSshProxyVersion(db(), version);
    expect(stored.accounts).toHaveLength(121);
    expect(stored.accounts.every((account) => account.authorizedKeys.join() === key)).toBe(true);
    expect(new TextEncoder().encode(JSON.stringify(stored.accounts)).length).toBeGreaterThan(1_700_000);
    // The file carries each account's keys base64-encoded: 4/3 of them.
    const keysData = btoa(`${key}\n`);
    expect(stored.yaml.split(keysData)).toHaveLength(122);
    expect(new TextEncoder().encode(stored.yaml).length).toBeGreaterThan(2_200_000);
    const pieces = await env.DB.prepare(
      "select name, count(*) as n from ssh_proxy_version_files where version_id = ? group by name order by name",
    )
      .bind(version)
      .all();
    expect(pieces.results).toEqual([
      { name: "accounts.json", n: 2 },
      { name: "sshpiperd.yaml", n: 3 },
    ]);
  });
});

describe("a version's stored files", () => {
  it("reads a version whose file is gone as an error, never as an empty configuration", async () => {
    const runId = await createJobRun(db(), { kind: "writesshprx", trigger: "test" });
    const input = { runId, files, kept: 20, addressExceptions: [], now: new Date() };
    const { version } = await writeSshProxyConfiguration(db(), input);
    await env.DB.prepare("delete from ssh_proxy_version_files where version_id = ? and name = 'sshpiperd.yaml'")
      .bind(version)
      .run();
    await expect(getSshProxyVersion(db(), version)).rejects.toThrow(
      new Error(`SSH proxy version ${version} has no sshpiperd.yaml stored`),
    );
  });
});
