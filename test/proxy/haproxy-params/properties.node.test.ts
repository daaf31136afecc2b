// Property tests of the HAProxy params vetting (pure, plain Node) over any input: never throwing, within the limits,
// and accepting only lines and server params made of allow-listed words that read no file and expand nothing.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAX_LINE_LENGTH,
  MAX_PARAMS_LINES,
  vetBackendParams,
  vetServerParams,
} from "../../../src/proxy/haproxy-params/index";
import { BACKEND_DIRECTIVES } from "../../../src/proxy/haproxy-params/directives";
import { SERVER_OPTIONS } from "../../../src/proxy/haproxy-params/server-options";
import { FILE_KEYWORDS, tokenizeLine } from "../../../src/proxy/haproxy-params/tokenizer";
import { tuning } from "../../support/haproxy-param-tuning";

/** Pieces of lines: directives, attack forms, quoting and escapes, so that random joins reach every path. */
const piece = fc.constantFrom(
  ...Object.keys(BACKEND_DIRECTIVES),
  ...Object.keys(SERVER_OPTIONS),
  "no",
  "program",
  '"program"',
  "\\x70rogram",
  "'global'",
  ".if",
  "_maintenance",
  "server",
  "log",
  "stick-table",
  "roundrobin",
  "5s",
  "30s",
  "httpchk",
  "redispatch",
  "GET",
  "/health",
  "200",
  "set-header",
  "deny",
  "return",
  "status",
  "content-type",
  "text/plain",
  "string",
  "X-A",
  "if",
  "unless",
  "{",
  "}",
  "!",
  "||",
  "path_beg",
  "/api",
  "src",
  "10.0.0.0/8",
  "%[src]",
  "%[path,lower]",
  "%[env(X)]",
  "map(/etc/passwd)",
  "file",
  "lf-file",
  "certs/x.pem",
  "-f",
  "-i",
  "-m",
  "beg",
  "${HOME}",
  "$HOME",
  '"$HOME"',
  "\\$x",
  '"a b"',
  "'c d'",
  "\\ ",
  "\\x41",
  "\\x00",
  "#",
  "\\",
  '"',
  "'",
  "none",
  "required",
  "@system-ca",
  "h2",
  "ok",
  "3",
  "-1",
  "\t",
  "\u0085",
  "é",
  "constructor",
  "__proto__",
  "%[toString]",
  "hasOwnProperty(x)",
);
const serverTuning = [
  "check inter 2s",
  "ssl verify none sni req.hdr(host)",
  "backup weight 0",
  "agent-check agent-port 9999",
  "cookie s1 check",
];
const joined = fc
  .array(fc.tuple(piece, fc.constantFrom(" ", " ", "", "\t")), { maxLength: 12 })
  .map((parts) => parts.map(([p, s]) => p + s).join(""));
/** Params built from accepted lines with a piece put in somewhere (or not): most runs reach the accepting paths. */
function paramsFrom(accepted: string[]) {
  const mutated = fc
    .tuple(fc.constantFrom(...accepted), fc.option(piece, { freq: 2 }), fc.nat(), fc.nat())
    .map(([text, insert, at, cut]) => {
      if (insert === null) return text;
      const position = at % (text.length + 1);
      return cut % 3 === 0 ? text.slice(0, position) + insert : text.slice(0, position) + insert + text.slice(position);
    });
  const line = fc.oneof(mutated, joined);
  return fc.oneof(
    { weight: 3, arbitrary: line },
    { weight: 2, arbitrary: fc.array(line, { minLength: 2, maxLength: 6 }).map((lines) => lines.join("\n")) },
    { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 300 }) },
  );
}
const params = paramsFrom([...tuning, ...serverTuning.map((line) => `default-server ${line}`)]);
const serverParams = paramsFrom(serverTuning);

const DIRECTIVE_WORDS = new Set([...Object.keys(BACKEND_DIRECTIVES), "no"]);
const EXPANSION = /\$[A-Za-z_.{]/;
/**
 * Calls that read files, the environment or code, where HAProxy reads a call: a word's start, after `,` (a converter),
 * `[` (a log-format expression) or `(`. Elsewhere the text is literal (`.map(x)` as a path_end pattern reads nothing).
 */
const FILE_CALLS = /(^|[,[(])(map(_[a-z]+)?|env|lua\.[A-Za-z0-9_.]*|table_[a-z_]+)\(/;

function expectHarmless(lineWords: string[]) {
  lineWords.forEach((word, index) => {
    expect(word).not.toBe("");
    expect(word).not.toMatch(EXPANSION);
    expect(word).not.toMatch(FILE_CALLS);
    expect(word).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
    if (FILE_KEYWORDS.has(word)) expect([word, lineWords[index + 1]]).toEqual(["ca-file", "@system-ca"]);
  });
}

describe("properties", () => {
  it("vets and tokenises any text to a value or a refusal, never throwing, within the limits", () => {
    fc.assert(
      fc.property(
        params,
        fc.array(fc.constantFrom("bogus", "http-send-name-header", "program", "server"), { maxLength: 2 }),
        (text, extra) => {
          const result = vetBackendParams(text, extra);
          const lines = text.split(/\r?\n/);
          if (result.ok) {
            expect(result.value.lines.length).toBeLessThanOrEqual(Math.min(lines.length, MAX_PARAMS_LINES));
            for (const kept of result.value.lines) expect(kept.length).toBeLessThanOrEqual(MAX_LINE_LENGTH);
          } else {
            expect(result.error.line).toBeGreaterThanOrEqual(1);
            expect(result.error.line).toBeLessThanOrEqual(lines.length);
            expect(typeof result.error.reason).toBe("string");
          }
          const server = vetServerParams(text);
          expect(typeof server.ok).toBe("boolean");
          const tokens = tokenizeLine(text);
          if (tokens.ok) expect(tokens.value.words.every((word) => typeof word === "string")).toBe(true);
          else expect(typeof tokens.error).toBe("string");
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("accepts only lines whose first word is allow-listed and whose words read no file and expand nothing", () => {
    let accepted = 0;
    fc.assert(
      fc.property(params, (text) => {
        const result = vetBackendParams(text);
        if (!result.ok) return;
        for (const kept of result.value.lines) {
          const again = tokenizeLine(kept);
          expect(again.ok).toBe(true);
          if (!again.ok) return;
          const lineWords = again.value.words;
          accepted++;
          expect(DIRECTIVE_WORDS.has(lineWords[0])).toBe(true);
          if (lineWords[0] === "no") expect(lineWords[1]).toBe("option");
          expectHarmless(lineWords);
        }
      }),
      { numRuns: 3000 },
    );
    // The generator must reach the accepting paths, or the property proves nothing.
    expect(accepted).toBeGreaterThan(150);
  });

  it("accepts only server params made of allow-listed options", () => {
    let accepted = 0;
    fc.assert(
      fc.property(serverParams, (text) => {
        const result = vetServerParams(text);
        if (!result.ok || result.value === "") return;
        const again = tokenizeLine(result.value);
        expect(again.ok).toBe(true);
        if (!again.ok) return;
        accepted++;
        expect(Object.hasOwn(SERVER_OPTIONS, again.value.words[0])).toBe(true);
        expectHarmless(again.value.words);
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(100);
  });
});
