// Byte encodings every service uses: base64, base64url, hex, SHA-1/SHA-256/MD5 digests as hex, and text or JSON lists
// cut into pieces of bounded UTF-8 size, written once.

const encoder = new TextEncoder();

/** Standard base64 with padding; chunked so that large inputs never overflow the argument list. */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Bytes of standard base64 text; throws (as atob does) when the text is not base64. */
export function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

/** base64url without padding (RFC 4648 §5), as JWTs and PBKDF2 hash strings use it. */
export const toBase64Url = (bytes: Uint8Array): string =>
  toBase64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

export const fromBase64Url = (text: string): Uint8Array => fromBase64(text.replaceAll("-", "+").replaceAll("_", "/"));

/** The UTF-8 bytes of a text, in base64. */
export const utf8ToBase64 = (text: string): string => toBase64(encoder.encode(text));

/** Lower-case hex, two digits per byte. */
export const toHex = (bytes: Uint8Array): string =>
  Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");

/** Hex SHA-1 of the UTF-8 bytes of a text (names such as a Redis script's; never for security). */
export async function sha1Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-1", encoder.encode(text))));
}

/** Hex SHA-256 of the UTF-8 bytes of a text. */
export async function sha256Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))));
}

/** Hex MD5 of the UTF-8 bytes of a text (Gravatar addresses; never for security). */
export async function md5Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("MD5", encoder.encode(text))));
}

const decoder = new TextDecoder();

/**
 * The text cut into pieces of at most `maxBytes` UTF-8 bytes each, never inside a character: what stores a text
 * larger than one D1 value (2,000,000 bytes at most) as several rows. An empty text is one empty piece.
 */
export function utf8Pieces(text: string, maxBytes: number): string[] {
  // Below 4 bytes a character might fit in no piece.
  if (!(maxBytes >= 4)) throw new RangeError("a piece holds at least 4 bytes");
  const bytes = encoder.encode(text);
  const pieces: string[] = [];
  let start = 0;
  do {
    let end = Math.min(start + maxBytes, bytes.length);
    // A continuation byte (10xxxxxx) would split a character: end before the character's first byte instead.
    while (end < bytes.length && end > start && (bytes[end] & 0xc0) === 0x80) end--;
    pieces.push(decoder.decode(bytes.subarray(start, end)));
    start = end;
  } while (start < bytes.length);
  return pieces;
}

/**
 * The values as JSON arrays of at most `maxBytes` UTF-8 bytes each, in order: what binds a list larger than one D1
 * value (2,000,000 bytes at most) as several parameters. A value whose own JSON is larger is alone in its array; no
 * values give no arrays.
 */
export function jsonArrayPieces(values: readonly unknown[], maxBytes: number): string[] {
  const pieces: string[] = [];
  let current: string[] = [];
  // "[" and "]" plus a comma after every value but the last.
  let currentBytes = 1;
  for (const value of values) {
    const json = JSON.stringify(value);
    const bytes = encoder.encode(json).length + 1;
    if (current.length > 0 && currentBytes + bytes > maxBytes) {
      pieces.push(`[${current.join(",")}]`);
      current = [];
      currentBytes = 1;
    }
    current.push(json);
    currentBytes += bytes;
  }
  if (current.length > 0) pieces.push(`[${current.join(",")}]`);
  return pieces;
}
