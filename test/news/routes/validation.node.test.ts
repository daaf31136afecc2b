// Property tests of the news API's body parsers and of the URL filter ingestion uses (pure, plain Node): on any input
// they answer a value or their typed error, never anything else, and stay within their bounds.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NewsError } from "../../../src/news/errors";
import { httpUrl, MAX_URL_LENGTH } from "../../../src/news/store/text";
import {
  isoDate,
  isoDateEnd,
  MAX_JSON_DEPTH,
  parseJsonObject,
  parseNews,
  urlEncodedFields,
} from "../../../src/news/routes/validation";
import { z } from "../../../src/shared/zod";
import { InvalidUtf8 } from "../../../src/shared/http/request-body";

/** Calls `parse`, returning its value or the error it threw. */
function outcome<T>(parse: () => T): { value: T } | { error: unknown } {
  try {
    return { value: parse() };
  } catch (error) {
    return { error };
  }
}

/** Form text made of the characters that matter to the parser, some escapes and a few non-ASCII ones. */
const formText = fc.string({
  unit: fc.oneof(
    fc.constantFrom("&", "=", "+", "%", "a", "b", "0", "F", "é", "😀", " "),
    fc.integer({ min: 0, max: 255 }).map((byte) => `%${byte.toString(16).padStart(2, "0")}`),
  ),
  maxLength: 60,
});

/**
 * The WHATWG application/x-www-form-urlencoded parser, written out as the standard says, as the oracle: Node's
 * URLSearchParams puts U+FFFD for a raw non-ASCII character followed by a lone "%" ("=%00é%"), which the standard does not.
 */
function whatwgFormEntries(text: string): [string, string][] {
  const percentDecode = (part: string) => {
    const bytes = new TextEncoder().encode(part.replaceAll("+", " "));
    const out: number[] = [];
    const hex = (byte: number | undefined) => byte !== undefined && /[0-9a-fA-F]/.test(String.fromCharCode(byte));
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] === 0x25 && hex(bytes[i + 1]) && hex(bytes[i + 2])) {
        out.push(parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16));
        i += 2;
      } else out.push(bytes[i]);
    }
    return new TextDecoder().decode(new Uint8Array(out));
  };
  return text
    .split("&")
    .filter((sequence) => sequence !== "")
    .map((sequence) => {
      const equals = sequence.indexOf("=");
      const [name, value] = equals < 0 ? [sequence, ""] : [sequence.slice(0, equals), sequence.slice(equals + 1)];
      return [percentDecode(name), percentDecode(value)];
    });
}

describe("urlEncodedFields", () => {
  it("reads what the WHATWG parser reads, or refuses (InvalidUtf8) exactly where that parser would put U+FFFD", () => {
    fc.assert(
      fc.property(formText, (text) => {
        const entries = whatwgFormEntries(text);
        const lenient = Object.fromEntries(entries.filter(([, value]) => value !== ""));
        const result = outcome(() => urlEncodedFields(text));
        if ("value" in result) {
          expect(result.value).toEqual(lenient);
        } else {
          expect(result.error).toBeInstanceOf(InvalidUtf8);
          expect((result.error as InvalidUtf8).message).toBe("a form field is not valid UTF-8");
          expect(entries.flat().join("")).toContain("\uFFFD");
        }
      }),
      { numRuns: 300 },
    );
  });

  it("refuses escapes of bytes that are not UTF-8, keeps a % that starts no escape", () => {
    expect(() => urlEncodedFields("name=%FF")).toThrow(InvalidUtf8);
    expect(() => urlEncodedFields("name=%ED%A0%80")).toThrow(InvalidUtf8);
    expect(() => urlEncodedFields("name=%C3")).toThrow(InvalidUtf8);
    expect(urlEncodedFields("name=100%&b=%zz&c=Zo%C3%AB+x&d=")).toEqual({ name: "100%", b: "%zz", c: "Zoë x" });
  });
});

describe("parseJsonObject", () => {
  const isTypedRefusal = (error: unknown) =>
    error instanceof InvalidUtf8 || (error instanceof NewsError && error.status === 400);

  it("answers an object or a typed 400 for any text", () => {
    const jsonish = fc.oneof(
      fc.string({ unit: "binary", maxLength: 80 }),
      fc.string({
        unit: fc.constantFrom("{", "}", "[", "]", '"', ":", ",", "\\", "u", "d", "8", "0", "1", " "),
        maxLength: 80,
      }),
      fc.json({ maxDepth: 4 }),
    );
    fc.assert(
      fc.property(jsonish, (text) => {
        const result = outcome(() => parseJsonObject(text));
        if ("value" in result)
          expect(typeof result.value === "object" && result.value !== null && !Array.isArray(result.value)).toBe(true);
        else expect(isTypedRefusal(result.error), String(result.error)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it(`accepts every object of well-formed strings nested at most ${MAX_JSON_DEPTH} levels as it is`, () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 6 }), { maxKeys: 5 }), (value) => {
        expect(parseJsonObject(JSON.stringify(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 200 },
    );
  });

  it("refuses nesting past the limit with the depth error, however deep, without exhausting the stack", () => {
    fc.assert(
      fc.property(fc.integer({ min: MAX_JSON_DEPTH + 1, max: 200_000 }), fc.boolean(), (levels, arrays) => {
        const [open, close] = arrays ? ["[", "]"] : ['{"a":', "}"];
        const text = `{"x":${open.repeat(levels - 1)}0${close.repeat(levels - 1)}}`;
        const result = outcome(() => parseJsonObject(text));
        expect("error" in result && result.error instanceof NewsError && result.error.body).toEqual({
          valid: false,
          name: "depth",
          param: "body",
          depth: MAX_JSON_DEPTH,
          message: `body must not nest deeper than ${MAX_JSON_DEPTH} levels`,
        });
      }),
      { numRuns: 20 },
    );
  });

  it("refuses a lone surrogate in a value or a key, accepts a pair", () => {
    expect(() => parseJsonObject('{"name":"\\ud800"}')).toThrow(InvalidUtf8);
    expect(() => parseJsonObject('{"name":["ok","\\udc00x"]}')).toThrow(InvalidUtf8);
    expect(() => parseJsonObject('{"\\udbff":1}')).toThrow(InvalidUtf8);
    expect(parseJsonObject('{"name":"\\ud83d\\ude00"}')).toEqual({ name: "😀" });
  });
});

describe("isoDate and isoDateEnd", () => {
  const dates = z.object({ from: isoDate.optional(), to: isoDateEnd.optional() });
  const refusal = (param: string, value: string) => ({
    valid: false,
    name: "type",
    param,
    value,
    message: `${param} must be an ISO 8601 date such as 2024-05-01 or 2024-05-01T09:30:00Z`,
  });
  const refused = (source: Record<string, string>) => {
    const result = outcome(() => parseNews(dates, source));
    return "error" in result && result.error instanceof NewsError ? result.error.body : result;
  };

  it("refuse a day the month does not have, as any other invalid date, rather than roll it over", () => {
    for (const value of [
      "2024-02-31",
      "2024-04-31",
      "2023-02-29",
      "2024-02-30T10:00:00Z",
      "2024-06-31T23:00:00+10:00",
    ]) {
      expect(refused({ from: value })).toEqual(refusal("from", value));
      expect(refused({ to: value })).toEqual(refusal("to", value));
    }
    expect(refused({ from: "2024-13-01" })).toEqual(refusal("from", "2024-13-01"));
  });

  it("read the last days of months and leap days as they are", () => {
    expect(parseNews(dates, { from: "2024-02-29", to: "2024-04-30" })).toEqual({
      from: new Date("2024-02-29T00:00:00.000Z"),
      to: new Date("2024-04-30T23:59:59.999Z"),
    });
    expect(parseNews(dates, { from: "2000-02-29T10:00:00+10:00", to: "0000-02-29" })).toEqual({
      from: new Date("2000-02-29T00:00:00.000Z"),
      to: new Date(Date.parse("0000-02-29T00:00:00Z") + 86_400_000 - 1),
    });
  });
});

describe("httpUrl", () => {
  it("answers undefined or an http(s) URL of at most MAX_URL_LENGTH characters, for any input", () => {
    const urlish = fc.oneof(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc.string({ unit: "binary", maxLength: 100 }),
      fc
        .constantFrom("javascript:", "data:", "ftp://", "JAVASCRIPT:", "http:", "https://", " ", "//")
        .chain((scheme) => fc.string({ maxLength: 30 }).map((rest) => scheme + rest)),
      fc
        .integer({ min: MAX_URL_LENGTH - 30, max: MAX_URL_LENGTH + 30 })
        .map((length) => `https://a.example/${"x".repeat(length - 18)}`),
    );
    fc.assert(
      fc.property(urlish, (value) => {
        const url = httpUrl(value);
        if (url !== undefined) {
          expect(url).toMatch(/^https?:\/\//);
          expect(url.length).toBeLessThanOrEqual(MAX_URL_LENGTH);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("drops javascript:, data: and ftp: pictures", () => {
    for (const value of [
      "javascript:alert(1)",
      " JavaScript:alert(1)",
      "data:image/png;base64,AAAA",
      "ftp://a.example/x.jpg",
      42,
      undefined,
    ]) {
      expect(httpUrl(value)).toBeUndefined();
    }
    expect(httpUrl(" https://a.example/x.jpg ")).toBe("https://a.example/x.jpg");
  });
});
