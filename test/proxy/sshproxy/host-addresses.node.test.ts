// The SSH proxy accounts generator (pure, plain Node) and a container stored at a registered host's address before the
// API refused that: the shared upstream key must never log in to the host, so the account is left out and named.
import { describe, expect, it } from "vitest";
import { generateSshAccounts } from "../../../src/proxy/sshproxy/config";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGFubmE= anna@laptop";
const v = { version: 0 };

describe("generateSshAccounts and host addresses", () => {
  it("leaves out the accounts of a container at a host's address, and keeps the others", () => {
    const { accounts, warnings } = generateSshAccounts({
      projects: [{ id: 1, label: "shop", fullname: null, revision: 0, ...v }],
      containers: [
        { id: 1, projectId: 1, label: "web", fullname: null, hostId: 1, ipv6: "2001:db8::11", ...v },
        { id: 2, projectId: 1, label: "onhost", fullname: null, hostId: 1, ipv6: "2001:db8::1", ...v },
      ],
      hosts: [{ id: 1, hostname: "h1.hosts.example", ipv6: "2001:db8:0:0::1", ...v }],
      permissions: [
        { id: 1, containerId: 1, userId: 1, permission: "root", ...v },
        { id: 2, containerId: 2, userId: 1, permission: "root", ...v },
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
          ...v,
        },
      ],
    });
    expect(accounts.map((account) => [account.name, account.target.host])).toEqual([["shop-web_root", "2001:db8::11"]]);
    expect(warnings).toEqual([
      "WARN: shop-onhost_root is left out: the address 2001:db8::1 of shop-onhost is the address of a registered host",
    ]);
  });
});
