// How Go prints a float (%v) and quotes a string (%q, strconv.Quote), and the UTF-8 checks behind them, so that
// messages quoting configuration content read as the reference's do.

/** Go's %v of a float64: the shortest digits, in exponent form below 1e-4 or from 1e6 on (or past the digits). */
export function goFloat(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value === 0) return Object.is(value, -0) ? "-0" : "0";
  const [mantissa, exponentText] = value.toExponential().split("e");
  const exponent = Number(exponentText);
  const digits = mantissa.replace(/[-.]/g, "").length;
  // strconv's shortest %g: exponent form when the exponent is below -4 or reaches the precision, 6 unless the digits
  // are fewer and reach past the point.
  const precision = digits < 6 && digits >= exponent + 1 ? digits : 6;
  if (exponent < -4 || exponent >= precision) {
    const magnitude = String(Math.abs(exponent)).padStart(2, "0");
    return `${mantissa}e${exponent < 0 ? "-" : "+"}${magnitude}`;
  }
  return String(value);
}

/**
 * The UTF-8 bytes of a string. A lone surrogate, which a JS string may hold but UTF-8 cannot, is encoded as its
 * three-byte form (as a Go string holding those bytes would be), so that it stays invalid.
 */
export function utf8Bytes(text: string): Uint8Array {
  const bytes: number[] = [];
  for (const char of text) {
    const cp = char.codePointAt(0)!;
    if (cp < 0x80) bytes.push(cp);
    else if (cp < 0x800) bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
    else if (cp < 0x10000) bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    else bytes.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  }
  return Uint8Array.from(bytes);
}

/** The rune starting at `at` and its width, or -1 with width 1 where the bytes are not UTF-8 (as utf8.DecodeRune). */
function decodeRune(bytes: Uint8Array, at: number): [rune: number, width: number] {
  const first = bytes[at];
  if (first < 0x80) return [first, 1];
  // Per lead byte: the sequence's width, its smallest code point (no overlong forms), and the second byte's range.
  const [width, min, low, high] =
    first >= 0xc2 && first <= 0xdf
      ? [2, 0x80, 0x80, 0xbf]
      : first === 0xe0
        ? [3, 0x800, 0xa0, 0xbf]
        : first === 0xed
          ? [3, 0x800, 0x80, 0x9f] // no surrogates
          : first >= 0xe1 && first <= 0xef
            ? [3, 0x800, 0x80, 0xbf]
            : first === 0xf0
              ? [4, 0x10000, 0x90, 0xbf]
              : first >= 0xf1 && first <= 0xf3
                ? [4, 0x10000, 0x80, 0xbf]
                : first === 0xf4
                  ? [4, 0x10000, 0x80, 0x8f]
                  : [0, 0, 0, 0];
  if (width === 0 || at + width > bytes.length || bytes[at + 1] < low || bytes[at + 1] > high) return [-1, 1];
  let rune = first & (0xff >> (width + 1));
  for (let i = 1; i < width; i++) {
    const next = bytes[at + i];
    if ((next & 0xc0) !== 0x80) return [-1, 1];
    rune = (rune << 6) | (next & 0x3f);
  }
  return rune >= min ? [rune, width] : [-1, 1];
}

/** Whether bytes are valid UTF-8 (utf8.Valid): what a protobuf string must be. */
export function isUtf8(bytes: Uint8Array): boolean {
  for (let at = 0; at < bytes.length;) {
    const [rune, width] = decodeRune(bytes, at);
    if (rune < 0) return false;
    at += width;
  }
  return true;
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
const SHORT_ESCAPES: Record<number, string> = {
  7: "\\a",
  8: "\\b",
  12: "\\f",
  10: "\\n",
  13: "\\r",
  9: "\\t",
  11: "\\v",
};
/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** Go's %q of a string held as bytes (strconv.Quote): printable runes kept, the rest escaped, bad bytes as \xNN. */
export function goQuote(bytes: Uint8Array): string {
  let out = '"';
  for (let at = 0; at < bytes.length;) {
    const [rune, width] = decodeRune(bytes, at);
    if (rune < 0) out += `\\x${hex(bytes[at], 2)}`;
    else if (rune === 0x22 || rune === 0x5c) out += `\\${String.fromCodePoint(rune)}`;
    else if (PRINTABLE.test(String.fromCodePoint(rune))) out += String.fromCodePoint(rune);
    else if (SHORT_ESCAPES[rune] !== undefined) out += SHORT_ESCAPES[rune];
    else if (rune < 0x20 || rune === 0x7f) out += `\\x${hex(rune, 2)}`;
    else if (rune < 0x10000) out += `\\u${hex(rune, 4)}`;
    else out += `\\U${hex(rune, 8)}`;
    at += width;
  }
  return `${out}"`;
}
