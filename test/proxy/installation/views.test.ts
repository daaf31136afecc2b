// The derived names the views compute, as the original spelled them (FQLabel, sshProxyUsername).
import { describe, expect, it } from "vitest";
import { backendFqLabel, containerFqLabel, sshProxyUsername } from "../../../src/proxy/installation/views";

describe("derived names", () => {
  it("follows the original's patterns", () => {
    expect(backendFqLabel("shop", 17, "prod")).toBe("shop_17_prod");
    expect(containerFqLabel("shop", "web")).toBe("shop-web");
    expect(sshProxyUsername("shop", "web", "www-data")).toBe("shop-web_www-data");
  });
});
