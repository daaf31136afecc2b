// Vetting of the IPv6 addresses that tenants give their containers (and the administrator its hosts): HAProxy and
// the SSH proxy connect to them, so an address that reaches this machine, a neighbour or a cloud metadata service
// is refused, and every accepted address is stored in one canonical form so that uniqueness holds.
import ipaddr from "ipaddr.js";
import type { Result } from "../../shared/result";

export type AddressCheck = Result<string, string>;

/** Longest text looked at: the longest IPv6 spelling (an IPv4 tail included) is 45 characters. */
const MAX_ADDRESS_LENGTH = 45;

/** Cloud metadata and host-agent services reachable on ordinary (not link-local) addresses. */
const METADATA_IPV4 = new Set(["100.100.100.200", "168.63.129.16"]);
/** AWS (IMDS over IPv6) and Google Cloud (metadata.google.internal over IPv6). */
const METADATA_IPV6 = new Set(["fd00:ec2::254", "fd20:ce::254"]);

const refused = (reason: string): AddressCheck => ({ ok: false, error: reason });

/** Why an IPv4 address (on its own or inside an IPv6 one) may not be a target, or undefined when it may. */
function ipv4Refusal(address: ipaddr.IPv4): string | undefined {
  const dotted = address.toString();
  if (METADATA_IPV4.has(dotted)) return "is a cloud metadata address";
  switch (address.range()) {
    case "loopback":
      return "is a loopback address";
    case "unspecified":
      return "is the unspecified address";
    case "linkLocal":
      return "is a link-local address (cloud metadata services live there)";
    case "multicast":
      return "is a multicast address";
    case "broadcast":
      return "is the broadcast address";
    default:
      return undefined;
  }
}

/**
 * 64:ff9b:1::/48, the local-use NAT64 prefix (RFC 8215), is refused whole. A translator may use any prefix length in
 * it (/48 to /96), and RFC 6052 puts the IPv4 address at a different place for each (bits 48-63 and 72-87 under a /48,
 * the last 32 bits under a /96): any address in it may reach 127.0.0.1 or a metadata service through some
 * translator, and none is a host's own address. PROXY_ADDRESS_EXCEPTIONS can still allow a part of it.
 */
const LOCAL_NAT64 = "is in the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215), which may embed any IPv4 address";

/** The IPv4 address carried inside an IPv6 one by the mapped, translated, NAT64 and 6to4 forms. */
function embeddedIpv4(parts: number[]): ipaddr.IPv4 | undefined {
  const fromWords = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const zeros = (from: number, to: number) => parts.slice(from, to).every((part) => part === 0);
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (RFC 6145 translated)
  if (zeros(0, 5) && parts[5] === 0xffff) return fromWords(parts[6], parts[7]);
  if (zeros(0, 4) && parts[4] === 0xffff && parts[5] === 0) return fromWords(parts[6], parts[7]);
  // 64:ff9b::a.b.c.d, the well-known NAT64 prefix (RFC 6052)
  if (parts[0] === 0x64 && parts[1] === 0xff9b && zeros(2, 6)) return fromWords(parts[6], parts[7]);
  // 2002:AABB:CCDD::/48, 6to4
  if (parts[0] === 0x2002) return fromWords(parts[1], parts[2]);
  return undefined;
}

/**
 * The address with a dotted IPv4 tail written as two hex words, as RFC 4291 reads it (ipaddr.js would read
 * "::a.b.c.d" as a mapped address); undefined when the tail is not a dotted quad.
 */
function withHexTail(text: string): string | undefined {
  const colon = text.lastIndexOf(":");
  const tail = text.slice(colon + 1);
  if (!tail.includes(".")) return text;
  if (colon < 0 || !ipaddr.IPv4.isValidFourPartDecimal(tail)) return undefined;
  const [a, b, c, d] = ipaddr.IPv4.parse(tail).octets;
  return `${text.slice(0, colon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** An IPv6 network in CIDR notation, as the installation setting lists them. */
export type Ipv6Network = [ipaddr.IPv6, number];

/** Parses one IPv6 CIDR range ("::ffff:127.0.0.0/104"), or undefined when it is not one. */
export function parseIpv6Network(text: string): Ipv6Network | undefined {
  const slash = text.lastIndexOf("/");
  const address = slash < 0 ? undefined : withHexTail(text.slice(0, slash));
  if (address === undefined || !ipaddr.IPv6.isValidCIDR(`${address}${text.slice(slash)}`)) return undefined;
  return ipaddr.IPv6.parseCIDR(`${address}${text.slice(slash)}`);
}

/** The address in RFC 5952 form (lower case, shortest), the form stored and compared; or why it is no IPv6 address. */
export function canonicalIpv6(text: string): AddressCheck {
  const address = parseIpv6(text);
  return address ? { ok: true, value: address.toRFC5952String() } : refused("must be an IPv6 address");
}

/** The address parsed once (the generator vets thousands per run), or undefined when it is no plain IPv6 address. */
function parseIpv6(text: string): ipaddr.IPv6 | undefined {
  if (text.length > MAX_ADDRESS_LENGTH || text.includes("%")) return undefined;
  const hex = withHexTail(text);
  if (hex === undefined) return undefined;
  try {
    return ipaddr.IPv6.parse(hex);
  } catch {
    return undefined;
  }
}

/**
 * Checks a container or host address. Accepted addresses come back in canonical form (canonicalIpv6). Refused:
 * anything that is not a plain IPv6 address (zone ids too), the unspecified and loopback addresses, link-local,
 * site-local and multicast ranges, the deprecated IPv4-compatible form, cloud metadata addresses, the local-use NAT64
 * prefix, and mapped, NAT64 and 6to4 forms of a refused IPv4 address, unless the installation lists a network holding the address among its
 * `exceptions` (a test installation whose containers listen on loopback, say).
 */
export function vetContainerAddress(text: string, exceptions: readonly Ipv6Network[] = []): AddressCheck {
  if (exceptions.length > 0) return vet(text, exceptions);
  let checked = remembered.get(text);
  if (checked === undefined) {
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.set(text, (checked = vet(text, exceptions)));
  }
  return checked;
}

/** The canonical addresses of a list of hosts, built once per list: a generation passes the same list throughout. */
const hostAddressSets = new WeakMap<readonly { ipv6: string }[], ReadonlySet<string>>();

function hostAddresses(hosts: readonly { ipv6: string }[]): ReadonlySet<string> {
  let addresses = hostAddressSets.get(hosts);
  if (!addresses) {
    addresses = new Set(hosts.map(({ ipv6 }) => parseIpv6(ipv6)?.toRFC5952String() ?? ipv6));
    hostAddressSets.set(hosts, addresses);
  }
  return addresses;
}

/**
 * vetContainerAddress for a container the generators connect to, which must not be at a registered host's address
 * either: HAProxy's traffic and the SSH proxy's shared upstream key would reach the host itself. The API refuses such
 * an address since issue 27; rows stored before are left out with the generators' warning.
 */
export function vetTargetAddress(
  text: string,
  hosts: readonly { ipv6: string }[],
  exceptions: readonly Ipv6Network[] = [],
): AddressCheck {
  const checked = vetContainerAddress(text, exceptions);
  if (checked.ok && hostAddresses(hosts).has(checked.value)) return refused("is the address of a registered host");
  return checked;
}

/**
 * Answers this isolate already gave, by address text: the HAProxy generator vets every container's address on every
 * run, and the same addresses come back each time. Bounded; emptied when full.
 */
const remembered = new Map<string, AddressCheck>();
const MAX_REMEMBERED = 50_000;

function vet(text: string, exceptions: readonly Ipv6Network[]): AddressCheck {
  const address = parseIpv6(text);
  if (!address) return refused("must be an IPv6 address");
  const canonical = address.toRFC5952String();
  const parsed: AddressCheck = { ok: true, value: canonical };
  const parts = address.parts;
  // Global unicast (2000::/3) but 6to4 holds none of the refused ranges: the common case, decided at once (the
  // generator vets every container's address on every run).
  if ((parts[0] & 0xe000) === 0x2000 && parts[0] !== 0x2002) return parsed;
  if (exceptions.some((network) => address.match(network))) return parsed;
  if (parts.every((part) => part === 0)) return refused("is the unspecified address");
  if (parts.slice(0, 7).every((part) => part === 0) && parts[7] === 1) return refused("is a loopback address");
  if ((parts[0] & 0xffc0) === 0xfe80) return refused("is a link-local address");
  if ((parts[0] & 0xffc0) === 0xfec0) return refused("is a site-local address");
  if (parts[0] >> 8 === 0xff) return refused("is a multicast address");
  // ::a.b.c.d, the IPv4-compatible form RFC 4291 deprecated.
  if (parts.slice(0, 6).every((part) => part === 0)) return refused("is an IPv4-compatible address (deprecated)");
  if (METADATA_IPV6.has(canonical)) return refused("is a cloud metadata address");
  if (parts[0] === 0x64 && parts[1] === 0xff9b && parts[2] === 1) return refused(LOCAL_NAT64);
  const ipv4 = embeddedIpv4(parts);
  const ipv4Reason = ipv4 && ipv4Refusal(ipv4);
  if (ipv4Reason) return refused(`embeds ${ipv4!.toString()}, which ${ipv4Reason}`);
  return { ok: true, value: canonical };
}
