// The trim of each params line (plain Node): the same lines as the regex it replaced, on any input, and long runs of
// blanks before a word (quadratic for that regex) answered as before.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_LINE_LENGTH, vetBackendParams, vetServerParams } from "../../../src/proxy/haproxy-params/index";
import { trimBlanks } from "../../../src/proxy/haproxy-params/vet";

/** The trim the vetting used before: kept here as the reference the loop must match. */
const regexTrim = (line: string) => line.replace(/^[ \t]+|[ \t]+$/g, "");

/** Lines of blanks, words and the characters next to them (CR, NBSP, other whitespace a trim might wrongly take). */
const line = fc
  .array(fc.constantFrom(" ", "\t", "  ", "\t \t", "x", "timeout", "#", "\r", "\u00a0", "\v", "\f", '"', "\\ "), {
    maxLength: 40,
  })
  .map((pieces) => pieces.join(""));

describe("trimBlanks", () => {
  it("answers what the regex answered, on ordinary and random lines", () => {
    for (const text of ["", " ", "\t", " \t ", "a", " a", "a ", "\ta b\t", " \r", "\u00a0a\u00a0", "a \\ ", " x\v"]) {
      expect(trimBlanks(text)).toBe(regexTrim(text));
    }
    fc.assert(fc.property(line, (text) => trimBlanks(text) === regexTrim(text)));
    fc.assert(fc.property(fc.string({ maxLength: 60 }), (text) => trimBlanks(text) === regexTrim(text)));
  });

  it("vets params as their lines trimmed by the regex", () => {
    // Without CR: trimming a line ending in CR LF could turn what is left into a new CR LF, another split.
    const params = fc.array(line, { maxLength: 5 }).map((lines) => lines.join("\n").replaceAll("\r", ""));
    fc.assert(
      fc.property(params, (text) => {
        const trimmedByRegex = text.split("\n").map(regexTrim).join("\n");
        expect(vetBackendParams(text)).toEqual(vetBackendParams(trimmedByRegex));
      }),
    );
  });
});

describe("lines of many blanks before a word", () => {
  it("refuses the audit's 9998-character line and a 100 000-character one for their length", () => {
    for (const [pairs, length] of [
      [4995, 9998],
      [49_996, 100_000],
    ]) {
      const text = `timeout${" \t".repeat(pairs)}x`;
      expect(text).toHaveLength(length);
      expect(vetBackendParams(text)).toEqual({
        ok: false,
        error: { line: 1, text, reason: `longer than ${MAX_LINE_LENGTH} characters` },
      });
      expect(vetServerParams(text)).toEqual({
        ok: false,
        error: { line: 1, text, reason: `longer than ${MAX_LINE_LENGTH} characters` },
      });
    }
  });

  it("trims 100 000 blanks around a word to the word", () => {
    const blanks = " \t".repeat(50_000);
    expect(trimBlanks(`${blanks}balance roundrobin${blanks}`)).toBe("balance roundrobin");
    expect(vetBackendParams(`${blanks}balance roundrobin${blanks}\n${blanks}`)).toEqual({
      ok: true,
      value: { lines: ["balance roundrobin"], maintenance: false, serverTls: {} },
    });
    expect(vetServerParams(`${blanks}check${blanks}`)).toEqual({ ok: true, value: "check" });
  });
});
