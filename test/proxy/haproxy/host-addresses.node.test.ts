// The HAProxy generator (pure, plain Node) and containers stored at a registered host's address before the API refused
// that: the server is left out with a warning, as one with a refused address is, and the backend's others stay.
import { describe, expect, it } from "vitest";
import { generateHaproxyBundle } from "../../../src/proxy/haproxy/config";
import type { Installation } from "../../../src/proxy/installation/rows";
import { fallbackCertificateRow } from "../../support/proxy-rows";

const v = { version: 0 };

const installation: Installation = {
  projects: [{ id: 1, label: "shop", fullname: null, revision: 0, ...v }],
  backends: [{ id: 10, projectId: 1, label: "web", fullname: null, port: 80, params: null, ...v }],
  domains: [],
  backendContainers: [
    { id: 1, backendId: 10, containerId: 1, params: null, ...v },
    { id: 2, backendId: 10, containerId: 2, params: null, ...v },
  ],
  containers: [
    { id: 1, projectId: 1, label: "app", fullname: null, hostId: 1, ipv6: "2001:db8::a", ...v },
    // The address of host h2, spelled otherwise: compared in canonical form.
    { id: 2, projectId: 1, label: "sneaky", fullname: null, hostId: 1, ipv6: "2001:DB8:0::2", ...v },
  ],
  hosts: [
    { id: 1, hostname: "h1", ipv6: "2001:db8::1", ...v },
    { id: 2, hostname: "h2", ipv6: "2001:db8::2", ...v },
  ],
};

describe("generateHaproxyBundle and host addresses", () => {
  it("leaves out a server at a registered host's address, with a warning and a problem", () => {
    const bundle = generateHaproxyBundle(installation, [fallbackCertificateRow()], {
      httpPort: 80,
      httpsPort: 443,
      bindAddress: "::",
      httpsRedirectCode: 301,
    });
    const message =
      "backend shop_10_web: server h1_shop-sneaky is left out: its address 2001:DB8:0::2 is the address of a registered host";
    expect(bundle.files["haproxy.cfg"]).toContain("    server h1_shop-app [2001:db8::a]:80\n");
    expect(bundle.files["haproxy.cfg"]).not.toContain("sneaky");
    expect(bundle.warnings).toEqual([`WARN: ${message}`]);
    expect(bundle.problems).toEqual([{ project: "shop", backend: "web", kind: "server-address", message }]);
  });
});
