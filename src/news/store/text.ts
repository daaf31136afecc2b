// Text normalisation shared by ingestion and the admin article routes: HTML to plain text, the 256-character
// abstract, and the md5(title + source) fingerprint that de-duplicates articles.
import { md5Hex } from "../../shared/bytes";

const ABSTRACT_LENGTH = 256;

const namedEntities: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  ndash: "–",
  mdash: "—",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  hellip: "…",
  eacute: "é",
  copy: "©",
  reg: "®",
  trade: "™",
  pound: "£",
  euro: "€",
};

/** Decodes numeric and common named character references; unknown names are left as written. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#[0-9]{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,8});/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
    }
    return namedEntities[name.toLowerCase()] ?? whole;
  });
}

/** Plain text of an HTML fragment: scripts, styles and tags removed, entities decoded, white space collapsed. */
export function htmlToText(html: string): string {
  const withoutTags = html
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, " ")
    .replace(/<\/?[a-z][^>]*>/gi, " ");
  return decodeEntities(withoutTags).replace(/\s+/g, " ").trim();
}

/** The stored abstract: plain text, cut to 256 characters plus " ..." when it is longer. */
export function makeAbstract(html: string): string {
  const text = htmlToText(html);
  if (text.length <= ABSTRACT_LENGTH) return text;
  // Cut on code points so that an emoji or other astral character is never split in half.
  return `${Array.from(text).slice(0, ABSTRACT_LENGTH).join("").trimEnd()} ...`;
}

/** md5(title + source) as the original system computes it: the same story from the same source is one article. */
export const articleFingerprint = (title: string, source: string) => md5Hex(title + source);

/** The longest URL stored, from a publisher or from input (httpUrlField). */
export const MAX_URL_LENGTH = 2048;

/**
 * An absolute http(s) URL of at most MAX_URL_LENGTH characters, or undefined: publishers' links and pictures pass
 * here, so a javascript: or data: URL in a feed is dropped rather than stored and shown to clients.
 */
export function httpUrl(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const url = URL.parse(value.trim());
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) return undefined;
  return url.href.length <= MAX_URL_LENGTH ? url.href : undefined;
}
