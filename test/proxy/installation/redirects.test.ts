// The redirect URL rules (pure): which URLs a redirecting domain may use, and the prefix a `*` URL redirects to.
import { describe, expect, it } from "vitest";
import { isValidRedirectUrl, redirectPrefix } from "../../../src/proxy/installation/redirects";

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

describe("redirect prefixes", () => {
  it("drops a trailing /* or a bare trailing *", () => {
    expect(redirectPrefix("https://x.example/new/*")).toBe("https://x.example/new");
    expect(redirectPrefix("https://x.example/new*")).toBe("https://x.example/new");
    expect(redirectPrefix("https://x.example/*")).toBe("https://x.example");
  });
});
