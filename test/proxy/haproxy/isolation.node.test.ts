// Tracing `haproxy -c` refusals to tenant backends (pure, plain Node): by line number, by the proxy name HAProxy puts
// first, never by tenant text quoted later; HAProxy's summary lines ignored; anything else unattributed.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SectionPlace } from "../../../src/proxy/haproxy/config";
import { attributeAlerts } from "../../../src/proxy/haproxy/isolation";

const sections: SectionPlace[] = [
  { backendId: 10, project: "alpha", backend: "api", fqLabel: "alpha_10_api", firstLine: 60, lastLine: 66 },
  { backendId: 20, project: "beta", backend: "shop", fqLabel: "beta_20_shop", firstLine: 68, lastLine: 71 },
];

describe("attributeAlerts", () => {
  it("blames the section holding the line HAProxy names, in any directory, and keeps HAProxy's message", () => {
    const attribution = attributeAlerts(
      [
        "config : parsing [/etc/haproxy/.staging-7-ab12/haproxy.cfg:62] : error detected in backend 'alpha_10_api' while parsing 'http-request set-header' rule : failed to parse sample expression <int(x)]>",
        "config : [haproxy.cfg:71] : 'server beta_20_shop/s1' : unable to find required server 's2' for tracking.",
        "config : parsing [haproxy.cfg:66] : unexpected character 'b' in 'timeout tarpit'",
        "config : Error(s) found in configuration file : /etc/haproxy/haproxy.cfg",
        "config : Fatal errors found in configuration.",
      ],
      sections,
    );
    expect(attribution).toEqual({
      backends: new Map([
        [
          10,
          [
            "error detected in backend 'alpha_10_api' while parsing 'http-request set-header' rule : failed to parse sample expression <int(x)]>",
            "unexpected character 'b' in 'timeout tarpit'",
          ],
        ],
        [20, ["'server beta_20_shop/s1' : unable to find required server 's2' for tracking."]],
      ]),
      unattributed: [],
    });
  });

  it("blames the proxy HAProxy's post-parse checks name first", () => {
    expect(
      attributeAlerts(
        [
          "config : backend 'alpha_10_api' : unable to find server 'nosuch' referenced in a 'use-server' rule.",
          "config : Proxy 'beta_20_shop': unable to find stick-table 'nosuch'.",
          "config : '[server beta_20_shop/web' : odd",
        ],
        sections,
      ),
    ).toEqual({
      backends: new Map([
        [10, ["unable to find server 'nosuch' referenced in a 'use-server' rule."]],
        [20, ["unable to find stick-table 'nosuch'."]],
      ]),
      unattributed: ["config : '[server beta_20_shop/web' : odd"],
    });
  });

  it("leaves unattributed what names no tenant section: the frame's lines, other files, unknown proxies", () => {
    const alerts = [
      "config : parsing [haproxy.cfg:5] : unknown keyword 'bogus' in 'global' section",
      "config : parsing [haproxy.cfg:67] : the blank line between two sections",
      "config : parsing [domain2backend.map:3] : bad line",
      "config : Proxy 'http-in': unable to find backend 'x'.",
      "config : something else entirely",
    ];
    expect(attributeAlerts(alerts, sections)).toEqual({ backends: new Map(), unattributed: alerts });
  });

  it("never blames a backend named only in quoted tenant text", () => {
    const alert = "config : Proxy 'http-in': unable to find backend 'alpha_10_api' referenced in a 'use_backend' rule.";
    expect(attributeAlerts([alert], sections)).toEqual({ backends: new Map(), unattributed: [alert] });
    // A line in alpha's section whose message quotes beta's name blames alpha alone.
    expect(
      attributeAlerts(["config : parsing [haproxy.cfg:63] : backend 'beta_20_shop' : no such thing"], sections),
    ).toEqual({ backends: new Map([[10, ["backend 'beta_20_shop' : no such thing"]]]), unattributed: [] });
  });

  it("blames a line to the one section holding it, for any line number", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), (line) => {
        const { backends, unattributed } = attributeAlerts([`config : parsing [haproxy.cfg:${line}] : x`], sections);
        const holder = sections.find((place) => place.firstLine <= line && line <= place.lastLine);
        expect([...backends.keys()]).toEqual(holder ? [holder.backendId] : []);
        expect(unattributed).toHaveLength(holder ? 0 : 1);
      }),
    );
  });
});
