// The SSH proxy accounts generator (pure, plain Node) and a container stored at a registered host's address before the
// API refused that: the shared upstream key must never log in to the host, so the account is left out and named.
import { describe, expect, it } from "vitest";
import { generateSshAccounts } from "../../../src/proxy/sshproxy/config";
import { shopRootAccounts } from "../../support/proxy-rows";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGFubmE= anna@laptop";

describe("generateSshAccounts and host addresses", () => {
  it("leaves out the accounts of a container at a host's address, and keeps the others", () => {
    const { accounts, warnings } = generateSshAccounts(
      shopRootAccounts("2001:db8:0:0::1", { web: "2001:db8::11", onhost: "2001:db8::1" }, KEY),
    );
    expect(accounts.map((account) => [account.name, account.target.host])).toEqual([["shop-web_root", "2001:db8::11"]]);
    expect(warnings).toEqual([
      "WARN: shop-onhost_root is left out: the address 2001:db8::1 of shop-onhost is the address of a registered host",
    ]);
  });
});
