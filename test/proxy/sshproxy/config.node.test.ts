// The SSH proxy accounts generator (pure, plain Node): a container address stored before addresses were vetted never
// becomes an sshpiperd target for the shared upstream key; the account is left out and named in the warnings.
import { describe, expect, it } from "vitest";
import { generateSshAccounts } from "../../../src/proxy/sshproxy/config";
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
