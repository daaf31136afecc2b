// A small DER (ASN.1) encoder and reader: enough to build CSRs and a self-signed certificate and to read what the
// certificate jobs need from X.509 certificates, without a third-party ASN.1 library in the Worker.

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** A context-specific tag: [n] constructed (EXPLICIT or IMPLICIT over a constructed type) or primitive. */
export const contextTag = (n: number, constructed: boolean) => (constructed ? 0xa0 : 0x80) | n;

// ---- encoding ----

function encodeLength(length: number): Uint8Array {
  if (length < 0x80) return Uint8Array.of(length);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const result = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    result.set(part, offset);
    offset += part.length;
  }
  return result;
}

export const tlv = (tag: number, content: Uint8Array) =>
  concatBytes(Uint8Array.of(tag), encodeLength(content.length), content);

export const sequence = (...items: Uint8Array[]) => tlv(TAG.SEQUENCE, concatBytes(...items));
export const set = (...items: Uint8Array[]) => tlv(TAG.SET, concatBytes(...items));
export const nullValue = () => tlv(TAG.NULL, new Uint8Array(0));
export const octetString = (bytes: Uint8Array) => tlv(TAG.OCTET_STRING, bytes);
/** A BIT STRING of whole bytes (no unused bits). */
export const bitString = (bytes: Uint8Array) => tlv(TAG.BIT_STRING, concatBytes(Uint8Array.of(0), bytes));
export const utf8String = (text: string) => tlv(TAG.UTF8_STRING, new TextEncoder().encode(text));
export const ia5String = (text: string) => tlv(TAG.IA5_STRING, new TextEncoder().encode(text));
export const boolean = (value: boolean) => tlv(TAG.BOOLEAN, Uint8Array.of(value ? 0xff : 0));
export const explicit = (n: number, content: Uint8Array) => tlv(contextTag(n, true), content);

/** A non-negative INTEGER from its big-endian magnitude (minimal form, with a 0 byte when the top bit is set). */
export function unsignedInteger(magnitude: Uint8Array): Uint8Array {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const trimmed = magnitude.subarray(start);
  return tlv(TAG.INTEGER, trimmed[0] & 0x80 ? concatBytes(Uint8Array.of(0), trimmed) : trimmed);
}

export const smallInteger = (value: number) => unsignedInteger(Uint8Array.of(value));

export function objectIdentifier(dotted: string): Uint8Array {
  const arcs = dotted.split(".").map(Number);
  const bytes: number[] = [arcs[0] * 40 + arcs[1]];
  for (const arc of arcs.slice(2)) {
    const chunk: number[] = [arc & 0x7f];
    for (let rest = Math.floor(arc / 128); rest > 0; rest = Math.floor(rest / 128)) chunk.unshift((rest & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(TAG.OID, Uint8Array.from(bytes));
}

const two = (n: number) => (n < 10 ? `0${n}` : String(n));

/** UTCTime up to 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5). */
export function time(date: Date): Uint8Array {
  const year = date.getUTCFullYear();
  const rest = `${two(date.getUTCMonth() + 1)}${two(date.getUTCDate())}${two(date.getUTCHours())}${two(date.getUTCMinutes())}${two(date.getUTCSeconds())}Z`;
  const encoder = new TextEncoder();
  return year < 2050
    ? tlv(TAG.UTC_TIME, encoder.encode(`${two(year % 100)}${rest}`))
    : tlv(TAG.GENERALIZED_TIME, encoder.encode(`${year}${rest}`));
}

// ---- reading ----

export interface Node {
  tag: number;
  /** The content octets. */
  content: Uint8Array;
  /** The whole element, header included (what signatures cover). */
  raw: Uint8Array;
}

export class DerError extends Error {
  override name = "DerError";
}

/** Reads the element at `offset`; returns it and the offset after it. */
export function readNode(bytes: Uint8Array, offset = 0): { node: Node; next: number } {
  if (offset + 2 > bytes.length) throw new DerError("truncated DER element");
  const tag = bytes[offset];
  if ((tag & 0x1f) === 0x1f) throw new DerError("multi-byte DER tags are not supported");
  let length = bytes[offset + 1];
  let header = 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new DerError("unsupported DER length");
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[offset + 2 + i];
    header += count;
  }
  const end = offset + header + length;
  if (end > bytes.length) throw new DerError("truncated DER element");
  return { node: { tag, content: bytes.subarray(offset + header, end), raw: bytes.subarray(offset, end) }, next: end };
}

export function parse(bytes: Uint8Array): Node {
  const { node, next } = readNode(bytes);
  if (next !== bytes.length) throw new DerError("trailing bytes after the DER element");
  return node;
}

/** The elements inside a constructed element. */
export function children(node: Node): Node[] {
  const result: Node[] = [];
  for (let offset = 0; offset < node.content.length;) {
    const { node: child, next } = readNode(node.content, offset);
    result.push(child);
    offset = next;
  }
  return result;
}

export function expectTag(node: Node | undefined, tag: number, what: string): Node {
  if (!node || node.tag !== tag) throw new DerError(`${what}: unexpected ASN.1 structure`);
  return node;
}

export function readObjectIdentifier(node: Node): string {
  expectTag(node, TAG.OID, "object identifier");
  const bytes = node.content;
  const arcs = [Math.floor(bytes[0] / 40), bytes[0] % 40];
  let value = 0;
  for (const byte of bytes.subarray(1)) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      arcs.push(value);
      value = 0;
    }
  }
  return arcs.join(".");
}

export function readString(node: Node): string {
  return new TextDecoder().decode(node.content);
}

export function readTime(node: Node): Date {
  const text = readString(node);
  const match =
    node.tag === TAG.UTC_TIME
      ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
      : node.tag === TAG.GENERALIZED_TIME
        ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
        : null;
  if (!match) throw new DerError(`unsupported time ${JSON.stringify(text)}`);
  let year = Number(match[1]);
  if (node.tag === TAG.UTC_TIME) year += year >= 50 ? 1900 : 2000;
  return new Date(
    Date.UTC(year, Number(match[2]) - 1, Number(match[3]), Number(match[4]), Number(match[5]), Number(match[6])),
  );
}
