// The ALERT lines the HAProxy agent lists with a refusal: prefixes stripped, NOTICE and WARNING lines left out, every
// refused section named once before any is named twice, within the bounds that keep the answer under 64 KiB.
import { describe, expect, it } from "vitest";
import { MAX_ALERT_CHARACTERS, alertLines } from "../../haproxy-agent/alerts.mjs";

/** A configuration of `backends` sections of `servers` server lines each, after a global and a defaults section. */
function configOf(backends: number, servers: number) {
  const lines = ["global", "    maxconn 100", "defaults", "    mode http"];
  for (let backend = 0; backend < backends; backend++) {
    lines.push(`backend bk_${backend}`, "    default-server ssl");
    for (let server = 0; server < servers; server++) lines.push(`    server s${server} [2001:db8::${server + 1}]:80`);
  }
  return `${lines.join("\n")}\n`;
}

/** haproxy -c's refusal of every server line of the configuration, as HAProxy 2.6 prints it, and its closing line. */
function refusalOf(config: string) {
  const lines = config.split("\n").flatMap((line, index) => {
    const server = /^ {4}server (\S+)/.exec(line);
    return server
      ? [
          `[ALERT]    (7) : config : [/etc/haproxy/.check-1/haproxy.cfg:${index + 1}] : 'server x/${server[1]}' : refused`,
        ]
      : [];
  });
  return ["[NOTICE]   (7) : haproxy version is 2.6.12", ...lines, "[ALERT]    (7) : config : Fatal errors found."].join(
    "\n",
  );
}

const lineOf = (alert: string) => Number(/haproxy\.cfg:(\d+)\]/.exec(alert)?.[1]);

describe("alertLines", () => {
  it("lists haproxy's ALERT lines without their prefix, NOTICE and WARNING lines left out", () => {
    const output = [
      "[NOTICE]   (1363) : haproxy version is 2.6.12-1+deb12u4",
      "[WARNING]  (1363) : config : parsing [/c/haproxy.cfg:4] : a warning",
      "[ALERT]    (1363) : config : parsing [/c/haproxy.cfg:8] : unknown keyword 'x' in 'backend' section",
      "[ALERT] : config : backend 'b' : no server",
      "[ALERT]    (1363) : config : Fatal errors found in configuration.",
    ].join("\n");
    expect(alertLines(output)).toEqual([
      "config : parsing [/c/haproxy.cfg:8] : unknown keyword 'x' in 'backend' section",
      "config : backend 'b' : no server",
      "config : Fatal errors found in configuration.",
    ]);
  });

  it("names every refused section before a second line of any, however many servers each has", () => {
    const config = configOf(11, 64);
    const alerts = alertLines(refusalOf(config), config);
    const firstServers = Array.from({ length: 11 }, (_, backend) => 7 + backend * 66);
    expect(alerts.slice(0, 12).map((alert) => lineOf(alert) || alert)).toEqual([
      ...firstServers,
      "config : Fatal errors found.",
    ]);
    // Then the other lines in their order, while the bounds allow.
    expect(alerts.slice(12, 15).map(lineOf)).toEqual([8, 9, 10]);
    expect(alerts).toHaveLength(256);
    expect(alerts.join("").length).toBeLessThanOrEqual(MAX_ALERT_CHARACTERS);
  });

  it("groups lines named by proxy, and takes a line number only from HAProxy's own prefix", () => {
    const config = configOf(3, 2);
    const output = [
      "[ALERT] (1) : config : backend 'bk_0' : no server available",
      "[ALERT] (1) : config : 'server bk_0/s1' : refused",
      "[ALERT] (1) : config : proxy 'bk_1' : quoting [haproxy.cfg:19] does not move a line elsewhere",
      "[ALERT] (1) : config : parsing [haproxy.cfg:7] : first of bk_0",
      "[ALERT] (1) : config : parsing [haproxy.cfg:19] : first of bk_2",
      "[ALERT] (1) : config : parsing [haproxy.cfg:8] : second of bk_0",
    ].join("\n");
    expect(alertLines(output, config)).toEqual([
      "config : backend 'bk_0' : no server available",
      "config : proxy 'bk_1' : quoting [haproxy.cfg:19] does not move a line elsewhere",
      "config : parsing [haproxy.cfg:7] : first of bk_0",
      "config : parsing [haproxy.cfg:19] : first of bk_2",
      "config : 'server bk_0/s1' : refused",
      "config : parsing [haproxy.cfg:8] : second of bk_0",
    ]);
  });

  it("keeps at most 256 lines of at most 400 characters, and 20,000 characters in all", () => {
    const long = (line: number) => `[ALERT]    (1) : config : parsing [/c/haproxy.cfg:${line}] : ${"y".repeat(1000)}`;
    const sameLine = alertLines(Array.from({ length: 500 }, () => long(9)).join("\n"));
    expect(sameLine).toHaveLength(50);
    expect(
      sameLine.every((alert) => alert.length === 400 && alert.startsWith("config : parsing [/c/haproxy.cfg:9] : y")),
    ).toBe(true);
    const short = Array.from(
      { length: 500 },
      (_, index) => `[ALERT] (1) : config : parsing [/c/haproxy.cfg:${index}] : z`,
    );
    const config = configOf(300, 0);
    const alerts = alertLines(short.join("\n"), config);
    expect(alerts).toHaveLength(256);
    expect(alerts[0]).toBe("config : parsing [/c/haproxy.cfg:0] : z");
  });
});
