// The readers of HAProxy's keyword dumps (scripts/generate-haproxy-keywords.mjs) on text as HAProxy 2.6 prints it:
// optional arguments in brackets, the usage columns named in the header, and converters printed `OUT => IN`.
import { describe, expect, it } from "vitest";
import { parseAcls, parseArguments, parseConverters, parseFetches } from "../../scripts/generate-haproxy-keywords.mjs";

describe("the readers of haproxy -dK dumps", () => {
  it.each([
    [undefined, { args: [], required: 0 }],
    ["string", { args: ["string"], required: 1 }],
    ["[string,integer]", { args: ["string", "integer"], required: 0 }],
    ["string[,string]", { args: ["string", "string"], required: 1 }],
    ["integer,integer[,table]", { args: ["integer", "integer", "table"], required: 2 }],
    ["IPv4 mask[,IPv6 mask]", { args: ["IPv4 mask", "IPv6 mask"], required: 1 }],
  ])("reads the arguments %j", (text, expected) => {
    expect(parseArguments(text)).toEqual(expected);
  });

  it("reads the usage columns and one fetch per line", () => {
    const dump = [
      "# List of registered sample fetch functions:",
      "#     _.---- backend http-request header rule",
      "#    / _.--- backend tcp-check rule",
      "#   / / _.-- logs",
      "#  / / /  ",
      "# | | | ",
      "[ Y . Y ] src: ipv4",
      "[ Y . . ] req.hdr([string,integer]): str",
      "[ Y Y Y ] var(string[,string]): any",
      "",
    ].join("\n");
    expect(parseFetches(dump)).toEqual({
      places: ["backend http-request header rule", "backend tcp-check rule", "logs"],
      fetches: {
        src: { out: "ipv4", args: [], required: 0, usage: "Y.Y" },
        "req.hdr": { out: "str", args: ["string", "integer"], required: 0, usage: "Y.." },
        var: { out: "any", args: ["string", "string"], required: 1, usage: "YYY" },
      },
    });
    expect(() => parseFetches("#   _.- logs\n[ Y Y ] src: ipv4\n")).toThrow(/usage columns/);
    expect(() => parseFetches("#   _.- logs\n[ Y ] src ipv4\n")).toThrow(
      "unexpected sample fetch line: [ Y ] src ipv4",
    );
  });

  it("reads converters as HAProxy 2.6 prints them: the output type first", () => {
    const dump =
      "# List of registered sample converter functions:\nlength: sint => str\nipmask(IPv4 mask[,IPv6 mask]): ipv4 => addr\n";
    expect(parseConverters(dump)).toEqual({
      length: { input: "str", out: "sint", args: [], required: 0 },
      ipmask: { input: "addr", out: "ipv4", args: ["IPv4 mask", "IPv6 mask"], required: 1 },
    });
  });

  it("reads ACL keywords", () => {
    expect(parseAcls("# List of registered ACL keywords:\nhdr_beg = req.hdr -m beg\npath = path -m str\n")).toEqual({
      hdr_beg: { fetch: "req.hdr", match: "beg" },
      path: { fetch: "path", match: "str" },
    });
  });
});
