// The SSH proxy accounts generator (pure, plain Node): a container address stored before addresses were vetted never
// becomes an sshpiperd target for the shared upstream key; the account is left out and named in the warnings. A
// restore keeps only what the installation still grants.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { accountsStillGranted, generateSshAccounts, type SshAccount } from "../../../src/proxy/sshproxy/config";
import { shopRootAccounts } from "../../support/proxy-rows";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGFubmE= anna@laptop";

describe("generateSshAccounts", () => {
  it("leaves out accounts whose container address is refused, and keeps the others", () => {
    const { accounts, warnings } = generateSshAccounts(
      shopRootAccounts("2001:db8::1", { web: "2001:db8::11", agent: "::1", meta: "::ffff:169.254.169.254" }, KEY),
    );
    expect(accounts.map((account) => [account.name, account.target.host])).toEqual([["shop-web_root", "2001:db8::11"]]);
    expect(warnings).toEqual([
      "WARN: shop-agent_root is left out: the address ::1 of shop-agent is a loopback address",
      "WARN: shop-meta_root is left out: the address ::ffff:169.254.169.254 of shop-meta embeds 169.254.169.254, which is a link-local address (cloud metadata services live there)",
    ]);
  });
});

const account = (name: string, host: string, users: string[], keys: string[]): SshAccount => ({
  name,
  project: "shop",
  container: `shop-${name}`,
  permission: "root",
  target: { user: "root", host, port: 22 },
  users,
  authorizedKeys: keys,
});

describe("accountsStillGranted", () => {
  it("cuts accounts no longer granted or led elsewhere, and users and keys taken away; keeps the rest whole", () => {
    const restored = [
      account("shop-gone_root", "2001:db8::1", ["anna@x"], ["k-anna"]),
      account("shop-moved_root", "2001:db8::2", ["anna@x"], ["k-anna"]),
      account("shop-web_root", "2001:db8::3", ["anna@x", "ben@x"], ["k-anna", "k-ben-old"]),
      account("shop-same_root", "2001:db8::4", ["anna@x"], ["k-anna"]),
    ];
    const current = [
      account("shop-moved_root", "2001:db8::99", ["anna@x"], ["k-anna"]),
      account("shop-web_root", "2001:db8::3", ["anna@x", "ben@x"], ["k-anna", "k-ben-new"]),
      account("shop-same_root", "2001:db8::4", ["anna@x", "carl@x"], ["k-anna", "k-carl"]),
      account("shop-new_root", "2001:db8::5", ["anna@x"], ["k-anna"]),
    ];
    expect(accountsStillGranted(restored, current)).toEqual({
      accounts: [
        account("shop-web_root", "2001:db8::3", ["anna@x", "ben@x"], ["k-anna"]),
        account("shop-same_root", "2001:db8::4", ["anna@x"], ["k-anna"]),
      ],
      warnings: [
        "WARN: shop-gone_root is left out: the installation no longer grants it",
        "WARN: shop-moved_root is left out: it led to root@[2001:db8::2]:22, and the installation now leads it to root@[2001:db8::99]:22",
        "WARN: shop-web_root keeps only the users and keys the installation still grants (1 left out)",
      ],
    });
  });

  it("never grants a key at a target the installation does not grant it at now", () => {
    const accountArb = fc.record({
      name: fc.constantFrom("a_root", "b_root", "c_root"),
      host: fc.constantFrom("2001:db8::1", "2001:db8::2"),
      users: fc.subarray(["anna@x", "ben@x", "carl@x"]),
      keys: fc.subarray(["k1", "k2", "k3"]),
    });
    const accountsArb = fc
      .uniqueArray(accountArb, { selector: (a) => a.name })
      .map((list) => list.map((a) => account(a.name, a.host, a.users, a.keys)));
    fc.assert(
      fc.property(accountsArb, accountsArb, (restored, current) => {
        const grants = new Set(current.flatMap((a) => a.authorizedKeys.map((k) => `${a.name} ${a.target.host} ${k}`)));
        const { accounts } = accountsStillGranted(restored, current);
        for (const kept of accounts)
          for (const key of kept.authorizedKeys)
            expect(grants.has(`${kept.name} ${kept.target.host} ${key}`)).toBe(true);
      }),
    );
  });
});
