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

/**
 * Plain text of an HTML fragment: comments, then scripts and styles, then tags removed (each replaced by a space),
 * entities decoded, white space collapsed. Each step is one pass in linear time: feeds and admins send any text, and
 * the patterns these steps were written as first (`<!--[\s\S]*?-->`, `<\/?[a-z][^>]*>`, ...) scan to the end of the
 * text again for every opening that is never closed.
 */
export function htmlToText(html: string): string {
  const withoutTags = removeTags(removeScriptsAndStyles(removeComments(html)));
  return decodeEntities(withoutTags).replace(/\s+/g, " ").trim();
}

/** Each `<!--` up to the first `-->` after it; an unclosed one stays, as every later one then is. */
function removeComments(html: string): string {
  let out = "";
  let from = 0;
  for (;;) {
    const open = html.indexOf("<!--", from);
    const close = open < 0 ? -1 : html.indexOf("-->", open + 4);
    if (close < 0) return out + html.slice(from);
    out += `${html.slice(from, open)} `;
    from = close + 3;
  }
}

/**
 * Each `<script` or `<style` (any case, ending a word) up to the first closing tag of the same name after it, which
 * may have white space before its `>`. Once a name has no closing tag left, its later openings are left as text.
 */
function removeScriptsAndStyles(html: string): string {
  const opening = /<(script|style)\b/gi;
  const closing: Record<string, RegExp> = { script: /<\/script\s*>/gi, style: /<\/style\s*>/gi };
  const unclosed = new Set<string>();
  let out = "";
  let from = 0;
  for (let found = opening.exec(html); found; found = opening.exec(html)) {
    const name = found[1].toLowerCase();
    if (unclosed.has(name)) continue;
    const closer = closing[name];
    closer.lastIndex = opening.lastIndex;
    if (!closer.exec(html)) {
      unclosed.add(name);
      continue;
    }
    out += `${html.slice(from, found.index)} `;
    from = opening.lastIndex = closer.lastIndex;
  }
  return out + html.slice(from);
}

const isAsciiLetter = (code: number) => (code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a;

/** Each `<` or `</` followed by a letter, up to the first `>`; with no `>` left, the rest stays as text. */
function removeTags(html: string): string {
  let out = "";
  let from = 0;
  let at = html.indexOf("<");
  while (at >= 0) {
    const letter = html.charCodeAt(at + 1) === 0x2f ? at + 2 : at + 1;
    if (isAsciiLetter(html.charCodeAt(letter))) {
      const end = html.indexOf(">", letter + 1);
      if (end < 0) break;
      out += `${html.slice(from, at)} `;
      from = end + 1;
      at = html.indexOf("<", from);
    } else {
      at = html.indexOf("<", at + 1);
    }
  }
  return out + html.slice(from);
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

/** The longest title stored, from a publisher (a longer one is skipped) or from input (the article schema). */
export const MAX_TITLE_LENGTH = 500;

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
