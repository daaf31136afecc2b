// The container address vetting (pure, plain Node): what is refused and why, the canonical form, and a property test.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseIpv6Network, vetContainerAddress, vetTargetAddress } from "../../../src/proxy/installation/addresses";

const LOCAL_NAT64 = "is in the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215), which may embed any IPv4 address";

describe("vetContainerAddress", () => {
  it.each([
    ["2001:db8::1", "2001:db8::1"],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1"],
    ["2001:0db8:0000::0100", "2001:db8::100"],
    ["fd12:3456::7", "fd12:3456::7"],
    ["2a01:4f8:c17:b8f::2", "2a01:4f8:c17:b8f::2"],
    ["::ffff:10.0.0.5", "::ffff:a00:5"],
    ["64:ff9b::808:808", "64:ff9b::808:808"],
    // Next to the refused prefixes: the metadata addresses' neighbours and the /48 after the local-use NAT64 one.
    ["fd20:ce::253", "fd20:ce::253"],
    ["64:ff9b:2::1", "64:ff9b:2::1"],
  ])("accepts %s as %s", (text, canonical) => {
    expect(vetContainerAddress(text)).toEqual({ ok: true, value: canonical });
  });

  it.each([
    ["::1", "is a loopback address"],
    ["0:0:0:0:0:0:0:1", "is a loopback address"],
    ["::", "is the unspecified address"],
    ["fe80::1", "is a link-local address"],
    ["febf:ffff::1", "is a link-local address"],
    ["fec0::1", "is a site-local address"],
    ["ff02::1", "is a multicast address"],
    ["::127.0.0.1", "is an IPv4-compatible address (deprecated)"],
    ["::a00:1", "is an IPv4-compatible address (deprecated)"],
    ["::ffff:127.0.0.1", "embeds 127.0.0.1, which is a loopback address"],
    ["::ffff:7f00:1", "embeds 127.0.0.1, which is a loopback address"],
    ["::ffff:0:127.0.0.1", "embeds 127.0.0.1, which is a loopback address"],
    [
      "::ffff:169.254.169.254",
      "embeds 169.254.169.254, which is a link-local address (cloud metadata services live there)",
    ],
    [
      "64:ff9b::a9fe:a9fe",
      "embeds 169.254.169.254, which is a link-local address (cloud metadata services live there)",
    ],
    ["64:ff9b::7f00:1", "embeds 127.0.0.1, which is a loopback address"],
    ["64:ff9b::0.0.0.0", "embeds 0.0.0.0, which is the unspecified address"],
    ["64:ff9b::e000:1", "embeds 224.0.0.1, which is a multicast address"],
    ["::ffff:255.255.255.255", "embeds 255.255.255.255, which is the broadcast address"],
    ["2002:7f00:1::1", "embeds 127.0.0.1, which is a loopback address"],
    ["::ffff:100.100.100.200", "embeds 100.100.100.200, which is a cloud metadata address"],
    ["64:ff9b::a83f:8110", "embeds 168.63.129.16, which is a cloud metadata address"],
    ["fd00:ec2::254", "is a cloud metadata address"],
    ["fd00:ec2:0::0254", "is a cloud metadata address"],
    ["fd20:ce::254", "is a cloud metadata address"],
    ["FD20:00CE:0:0::254", "is a cloud metadata address"],
    // 127.0.0.1 under a /96, a /64 and a /48 translator prefix (RFC 6052 positions), and any other address in it.
    ["64:ff9b:1::7f00:1", LOCAL_NAT64],
    ["64:ff9b:1:0:7f:0:100:0", LOCAL_NAT64],
    ["64:ff9b:1:7f00:0:100::", LOCAL_NAT64],
    ["64:ff9b:1:ffff:ffff:ffff:ffff:ffff", LOCAL_NAT64],
  ])("refuses %s: %s", (text, reason) => {
    expect(vetContainerAddress(text)).toEqual({ ok: false, error: reason });
  });

  it.each([
    "fe80::1%eth0",
    "127.0.0.1",
    "2001:db8::1/64",
    "[2001:db8::1]",
    " 2001:db8::1",
    "2001:db8::g",
    "",
    "::ffff:1.2.3.4.5",
  ])("refuses %j as not an IPv6 address", (text) => {
    expect(vetContainerAddress(text)).toEqual({ ok: false, error: "must be an IPv6 address" });
  });

  it("refuses long text without parsing it", () => {
    expect(vetContainerAddress("1:".repeat(10_000) + "1")).toEqual({ ok: false, error: "must be an IPv6 address" });
  });

  it("answers a value or a reason for any text, and accepted addresses are canonical and accepted again", () => {
    const hex = fc.constantFrom(..."0123456789abcdefABCDEF:.%".split(""));
    const addressLike = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.array(hex, { maxLength: 45 }).map((chars) => chars.join("")),
      fc
        .array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 })
        .map((parts) => parts.map((p) => p.toString(16)).join(":")),
    );
    fc.assert(
      fc.property(addressLike, (text) => {
        const checked = vetContainerAddress(text);
        if (checked.ok) {
          expect(checked.value).toMatch(/^[0-9a-f:.]+$/);
          expect(vetContainerAddress(checked.value)).toEqual(checked);
        } else {
          expect(typeof checked.error).toBe("string");
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe("parseIpv6Network and exceptions", () => {
  it("reads IPv6 CIDR ranges, dotted tails included, and nothing else", () => {
    expect(parseIpv6Network("::ffff:127.0.0.0/104")?.[1]).toBe(104);
    expect(parseIpv6Network("::1/128")?.[0].toRFC5952String()).toBe("::1");
    for (const text of ["::1", "127.0.0.0/8", "::1/129", "x/8", "", "/8"])
      expect(parseIpv6Network(text)).toBeUndefined();
  });

  it("accepts a refused address only inside a listed network", () => {
    const loopbackV4 = [parseIpv6Network("::ffff:127.0.0.0/104")!];
    expect(vetContainerAddress("::ffff:127.0.0.2", loopbackV4)).toEqual({ ok: true, value: "::ffff:7f00:2" });
    expect(vetContainerAddress("::1", loopbackV4)).toEqual({ ok: false, error: "is a loopback address" });
    const nat64 = [parseIpv6Network("64:ff9b:1:ab::/64")!];
    expect(vetContainerAddress("64:ff9b:1:ab::5", nat64)).toEqual({ ok: true, value: "64:ff9b:1:ab::5" });
    expect(vetContainerAddress("64:ff9b:1:ac::5", nat64)).toEqual({ ok: false, error: LOCAL_NAT64 });
    expect(vetContainerAddress("not an address", loopbackV4)).toEqual({ ok: false, error: "must be an IPv6 address" });
  });
});

describe("vetTargetAddress", () => {
  const hosts = [{ ipv6: "2001:db8::1" }, { ipv6: "2001:DB8::2" }];

  it("refuses a registered host's address in any spelling, and vets the rest as vetContainerAddress", () => {
    const host = { ok: false, error: "is the address of a registered host" };
    expect(vetTargetAddress("2001:db8::1", hosts)).toEqual(host);
    expect(vetTargetAddress("2001:0db8:0::0001", hosts)).toEqual(host);
    expect(vetTargetAddress("2001:db8::2", hosts)).toEqual(host);
    expect(vetTargetAddress("2001:db8::3", hosts)).toEqual({ ok: true, value: "2001:db8::3" });
    expect(vetTargetAddress("::1", hosts)).toEqual({ ok: false, error: "is a loopback address" });
  });

  it("refuses a host's address even inside PROXY_ADDRESS_EXCEPTIONS", () => {
    const exceptions = [parseIpv6Network("::ffff:127.0.0.0/104")!];
    const local = [{ ipv6: "::ffff:127.0.0.1" }];
    expect(vetTargetAddress("::ffff:127.0.0.1", local, exceptions)).toEqual({
      ok: false,
      error: "is the address of a registered host",
    });
    expect(vetTargetAddress("::ffff:127.0.0.2", local, exceptions)).toEqual({ ok: true, value: "::ffff:7f00:2" });
  });
});
