// Pure helpers of the proxy API: redirect URL rule, JSON output form, derived names.
import { describe, expect, it } from "vitest";
import { isValidRedirectUrl } from "../../src/proxy/domains";
import { canonical } from "../../src/proxy/json";
import { backendFqLabel, containerFqLabel, sshProxyUsername } from "../../src/proxy/views";

describe("isValidRedirectUrl", () => {
  it.each([
    "http://example.com",
    "https://example.com/",
    "https://sub.example-site.com:8443/a/b?c=d#e",
    "https://example.com/*",
    "https://example.com*",
    "https://example.com/path*",
  ])("accepts %s", (url) => expect(isValidRedirectUrl(url)).toBe(true));

  it.each([
    "ftp://example.com",
    "example.com",
    "https://",
    "https://Example.com",
    "https://exa mple.com",
    "https://example.com/a b",
    "https://example.com/a\nb",
    "https://example.com/*/x",
    "https://example.com**",
    "javascript:alert(1)",
    "https://-bad.example",
    "https://example.com:123456",
  ])("refuses %j", (url) => expect(isValidRedirectUrl(url)).toBe(false));
});

describe("canonical", () => {
  it("sorts keys in code unit order at every depth and drops null and undefined fields", () => {
    const value = canonical({
      b: 1,
      FQLabel: "x",
      a: null,
      c: [{ z: undefined, y: 2, X: [null] }],
      d: { f: false, e: 0 },
    });
    expect(JSON.stringify(value)).toBe('{"FQLabel":"x","b":1,"c":[{"X":[null],"y":2}],"d":{"e":0,"f":false}}');
  });
});

describe("derived names", () => {
  it("follows the original's patterns", () => {
    expect(backendFqLabel("shop", 17, "prod")).toBe("shop_17_prod");
    expect(containerFqLabel("shop", "web")).toBe("shop-web");
    expect(sshProxyUsername("shop", "web", "www-data")).toBe("shop-web_www-data");
  });
});
