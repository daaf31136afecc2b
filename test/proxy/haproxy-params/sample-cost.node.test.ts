// What a tenant's sample fetches and ACL matches may cost HAProxy a request: each evaluation of a fetch (a header or
// cookie fetch walks every value), each pattern at each use of its ACL, a -m sub pattern once more per character; at
// most 80 M character tests in one backend, refused at the line that passes it, with what to do instead.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { vetBackendParams, vetServerParams } from "../../../src/proxy/haproxy-params/index";
import {
  FETCH_WORK,
  MAX_SAMPLE_WORK_PER_BACKEND,
  PATTERN_WORK,
  VALUES_FETCH_WORK,
} from "../../../src/proxy/haproxy-params/sample-cost";
import { LONGEST_TEXT } from "../../../src/proxy/haproxy-params/regex-work";
import { refusal } from "../../support/proxy-params";
import { allowListForms } from "../../support/haproxy-param-forms";
import { tuning } from "../../support/haproxy-param-tuning";

const OVER =
  "more than 80000000 character tests a request in one backend for sample fetches and ACL matches (about 80 ms of " +
  "HAProxy's time; each evaluation costs: a header, cookie or URL parameter fetch 1048576, another fetch or a " +
  "converter 16384, each pattern 32768, and a -m sub, dir or dom pattern 16384 more per character; a named ACL " +
  "costs all its acl lines at each use): use each ACL in fewer conditions, give ACLs fewer patterns or acl lines, " +
  "match shorter substrings, or read headers and cookies in fewer places";

const lines = (...parts: (string | string[])[]) => parts.flat().join("\n");
const repeat = (count: number, text: string) => Array.from({ length: count }, () => text);

describe("the work a request may cost one backend's fetches and matches", () => {
  it("refuses the ACL used 58 times a rule that made HAProxy's watchdog kill it (4.6 s on 7000 header values)", () => {
    const rule = (n: number) => `http-request set-header y${n} z if ${repeat(58, "!a").join(" ")}`;
    const params = lines(
      "acl a hdr(x) -m str zzz",
      Array.from({ length: 199 }, (_, n) => rule(n)),
    );
    // Each use: the header's fetch and the one pattern, 1081344; 58 uses fit, the second rule's take it past the cap.
    expect(vetBackendParams(lines("acl a hdr(x) -m str zzz", rule(0))).ok).toBe(true);
    expect(refusal(params)).toEqual({ line: 3, text: rule(1), reason: `http-request set-header: ACL a: ${OVER}` });
  });

  it("counts a -m sub pattern once more per character at each use, and lines added to an ACL already used", () => {
    const acl = `acl s path_sub ${repeat(8, "a".repeat(199) + "b").join(" ")}`;
    // Three lines: 3 × (16384 + 8 × (32768 + 16384 × 200)) = 79478784, just under the cap.
    expect(vetBackendParams(lines(repeat(3, acl), "http-request deny if s")).ok).toBe(true);
    expect(refusal(lines(repeat(4, acl), "http-request deny if s"))).toEqual({
      line: 5,
      text: "http-request deny if s",
      reason: `http-request deny: ACL s: ${OVER}`,
    });
    expect(refusal(lines(repeat(3, acl), "http-request deny if s", acl))).toEqual({
      line: 5,
      text: acl,
      reason: `acl s: ${OVER}`,
    });
  });

  it("counts every %[hdr(x)] of a log-format: each walks all the header's values", () => {
    const setHeader = (count: number) => `http-request set-header X ${"%[hdr(x)]".repeat(count)}`;
    expect(vetBackendParams(setHeader(76)).ok).toBe(true);
    expect(refusal(setHeader(77))).toEqual({
      line: 1,
      text: setHeader(77),
      reason: `http-request set-header: the value: "hdr": ${OVER}`,
    });
  });

  it("counts an anonymous ACL at each rule, and a predefined ACL as its fetch and pattern", () => {
    const rule = "http-request set-header X 1 if { hdr(x) -m str a }";
    expect(vetBackendParams(lines(repeat(73, rule))).ok).toBe(true);
    expect(refusal(lines(repeat(74, rule)))).toEqual({
      line: 74,
      text: rule,
      reason: `http-request set-header: anonymous ACL: ${OVER}`,
    });
    // HTTP_CONTENT reads hdr_val(content-length) and matches `gt 0`: 73 uses fit, 74 do not.
    const predefined = (count: number) => `http-request set-header X 1 if ${repeat(count, "HTTP_CONTENT").join(" ")}`;
    expect(vetBackendParams(lines(predefined(37), predefined(36))).ok).toBe(true);
    expect(refusal(lines(predefined(37), predefined(37)))).toEqual({
      line: 2,
      text: predefined(37),
      reason: `http-request set-header: ACL HTTP_CONTENT: ${OVER}`,
    });
  });

  it("counts HTTP_URL_ABS, whose pattern is a regex, as a regex run each time it is used", () => {
    const regexes = lines(repeat(8, "acl api path_reg ^/api/").map((line, n) => `${line}${n}`));
    expect(vetBackendParams(lines(regexes, "http-request deny if api")).ok).toBe(true);
    expect(refusal(lines(regexes, "http-request deny if HTTP_URL_ABS"))?.reason).toBe(
      "http-request deny: ACL HTTP_URL_ABS: more than 8 regular expression runs a request in one backend (each pattern, once more for each further use of its ACL; each run may cost HAProxy about 10 ms)",
    );
  });

  it("counts a balance on a header and a server's sni with the rest", () => {
    expect(refusal(lines("balance hdr(host)", `http-request set-header X ${"%[hdr(x)]".repeat(76)}`))).toEqual({
      line: 2,
      text: `http-request set-header X ${"%[hdr(x)]".repeat(76)}`,
      reason: `http-request set-header: the value: "hdr": ${OVER}`,
    });
    expect(vetServerParams("ssl verify none sni hdr(host),lower").ok).toBe(true);
  });

  it("accepts every allow-listed form and the ordinary tuning a tenant writes", () => {
    const refused = [...allowListForms()].filter(([, form]) => !vetBackendParams(form.params).ok).map(([name]) => name);
    expect(refused).toEqual([]);
    expect(vetBackendParams(tuning.join("\n")).ok).toBe(true);
  });
});

describe("the bound, against a model of it", () => {
  const FETCHES = {
    "hdr(x)": VALUES_FETCH_WORK,
    "cook(c)": VALUES_FETCH_WORK,
    path: FETCH_WORK,
    "path,lower": 2 * FETCH_WORK,
  };
  const aclLine = fc.record({
    name: fc.constantFrom("a0", "a1", "a2"),
    fetch: fc.constantFrom(...(Object.keys(FETCHES) as (keyof typeof FETCHES)[])),
    match: fc.constantFrom("str", "beg", "end", "sub", "dom"),
    patterns: fc.array(
      fc.oneof(
        fc.stringMatching(/^z[a-z]{0,9}$/),
        fc.nat(299).map((length) => `z${"a".repeat(length)}`),
      ),
      { minLength: 1, maxLength: 5 },
    ),
  });
  const rule = fc.array(fc.constantFrom("a0", "a1", "a2"), { minLength: 1, maxLength: 50 });

  it("accepts exactly the params whose fetches and matches cost at most the cap, refused at the line past it", () => {
    const seen = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(
        fc.array(aclLine, { minLength: 1, maxLength: 6 }),
        fc.array(rule, { maxLength: 15 }),
        (acls, rules) => {
          const defined = new Set(acls.map((acl) => acl.name));
          const uses = rules.map((names) => names.filter((name) => defined.has(name))).filter((names) => names.length);
          const work = new Map<string, number>();
          for (const { name, fetch, match, patterns } of acls) {
            const each = patterns.map(
              (p) => PATTERN_WORK + (["sub", "dom"].includes(match) ? LONGEST_TEXT * p.length : 0),
            );
            work.set(name, (work.get(name) ?? 0) + FETCHES[fetch] + each.reduce((a, b) => a + b, 0));
          }
          let spent = 0;
          const over = uses.findIndex((names) => {
            spent += names.reduce((total, name) => total + work.get(name)!, 0);
            return spent > MAX_SAMPLE_WORK_PER_BACKEND;
          });
          const params = lines(
            acls.map((acl) => `acl ${acl.name} ${acl.fetch} -m ${acl.match} ${acl.patterns.join(" ")}`),
            uses.map((names) => `http-request set-header X 1 if ${names.join(" ")}`),
          );
          const result = vetBackendParams(params);
          if (over < 0) expect(result.ok).toBe(true);
          else expect(result.ok ? undefined : result.error.line).toBe(acls.length + over + 1);
          seen[over < 0 ? "accepted" : "refused"]++;
        },
      ),
      { numRuns: 300 },
    );
    // Both sides of the cap were reached.
    expect(Math.min(seen.accepted, seen.refused)).toBeGreaterThan(30);
  });
});
