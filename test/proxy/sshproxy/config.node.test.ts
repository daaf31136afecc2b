// The SSH proxy accounts generator (pure, plain Node): a container address stored before addresses were vetted never
// becomes an sshpiperd target for the shared upstream key; the account is left out and named in the warnings.
import { describe, expect, it } from "vitest";
import { generateSshAccounts } from "../../../src/proxy/sshproxy/config";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGFubmE= anna@laptop";
const row = { version: 0 };

describe("generateSshAccounts", () => {
  it("leaves out accounts whose container address is refused, and keeps the others", () => {
    const { accounts, warnings } = generateSshAccounts({
      projects: [{ id: 1, label: "shop", fullname: null, ...row }],
      containers: [
        { id: 1, projectId: 1, label: "web", fullname: null, hostId: 1, ipv6: "2001:db8::11", ...row },
        { id: 2, projectId: 1, label: "agent", fullname: null, hostId: 1, ipv6: "::1", ...row },
        { id: 3, projectId: 1, label: "meta", fullname: null, hostId: 1, ipv6: "::ffff:169.254.169.254", ...row },
      ],
      hosts: [{ id: 1, hostname: "h1.hosts.example", ipv6: "2001:db8::1", ...row }],
      permissions: [
        { id: 1, containerId: 1, userId: 1, permission: "root", ...row },
        { id: 2, containerId: 2, userId: 1, permission: "root", ...row },
        { id: 3, containerId: 3, userId: 1, permission: "root", ...row },
      ],
      users: [
        {
          id: 1,
          email: "anna@example.com",
          fullname: null,
          sshPublicKey: KEY,
          role: "USER",
          defaultPermission: [],
          proxyPermission: [],
          ...row,
        },
      ],
    } as unknown as Parameters<typeof generateSshAccounts>[0]);
    expect(accounts.map((account) => [account.name, account.target.host])).toEqual([["shop-web_root", "2001:db8::11"]]);
    expect(warnings).toEqual([
      "WARN: shop-agent_root is left out: the address ::1 of shop-agent is a loopback address",
      "WARN: shop-meta_root is left out: the address ::ffff:169.254.169.254 of shop-meta embeds 169.254.169.254, which is a link-local address (cloud metadata services live there)",
    ]);
  });
});
