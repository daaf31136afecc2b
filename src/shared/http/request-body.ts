// The one body reader of every service: bytes under a byte limit (refused before buffered whole), strict UTF-8, then
// JSON with one nesting check (form bodies: form-body.ts). Each refusal is its own class carrying what the service needs
// to word it; the status and message here are the default answer, which a service may map to its own wire shape.
// Requests from clients and responses from outside services (publishers' feeds, agents) are read the same way.
import { jsonTextTooDeep } from "../json-depth";
import { HttpError, InvalidJsonBody } from "./errors";

/** A body longer than the service's limit; the message names the limit and the setting that raises it. */
export class PayloadTooLarge extends HttpError {
  override name = "PayloadTooLarge";
  constructor(
    readonly limitBytes: number,
    readonly setting: string,
  ) {
    super(413, `request body is larger than ${limitBytes} bytes (the limit set by ${setting})`);
  }
}

/** A body (or a part of one) that is not well-formed UTF-8. */
export class InvalidUtf8 extends HttpError {
  override name = "InvalidUtf8";
  constructor(what = "request body") {
    super(400, `${what} is not valid UTF-8`);
  }
}

/** Where a body's limit comes from: its size in bytes and the setting that holds it (named in the 413). */
export interface BodyLimit {
  maxBytes: number;
  setting: string;
  /**
   * What happens to the rest of a streamed body past the limit: a client's request is read on (and dropped, up to
   * DRAIN_BYTES) so that its connection stays usable; a response from elsewhere (`false`) is cancelled at once.
   */
  drainExcess?: boolean;
}

/** A request or a response: anything with headers and a body stream. */
type HasBody = Pick<Request, "headers" | "body" | "arrayBuffer">;

/**
 * The body's bytes, at most `limit.maxBytes` of them. A declared Content-Length over the limit is refused before a
 * byte is read; a chunked body is counted as it streams and the read stops at the first byte past the limit.
 */
export async function readBodyBytes(request: HasBody, limit: BodyLimit): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit.maxBytes) {
    // Left untouched, the body is discarded by the runtime and the connection stays usable.
    throw new PayloadTooLarge(limit.maxBytes, limit.setting);
  }
  if (!request.body) return new Uint8Array(0);
  // A declared length within the limit is what the runtime delivers (it frames the body by it): one native read, where
  // a chunk-by-chunk read costs a promise per chunk, a measured 5 % of the CPU of a rate-limit decision. Not for an
  // encoded response: fetch decodes it, and the length is the encoded one.
  if (Number.isFinite(declared) && request.headers.has("content-length") && !request.headers.has("content-encoding")) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > limit.maxBytes) throw new PayloadTooLarge(limit.maxBytes, limit.setting);
    return bytes;
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit.maxBytes) {
      if (limit.drainExcess === false) await reader.cancel().catch(() => {});
      else await drainThenCancel(reader);
      throw new PayloadTooLarge(limit.maxBytes, limit.setting);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * Most bytes read and dropped after a streamed body passed its limit. Reading the rest keeps the client's keep-alive
 * connection usable (a body cancelled half-way leaves the next request on that connection hanging in workerd); a
 * client still sending after this much is cut off.
 */
const DRAIN_BYTES = 64 * 1024 * 1024;

async function drainThenCancel(reader: ReadableStreamDefaultReader<Uint8Array>) {
  let drained = 0;
  while (drained <= DRAIN_BYTES) {
    const { done, value } = await reader.read();
    if (done) return;
    drained += value.byteLength;
  }
  await reader.cancel().catch(() => {});
}

/** One decoder serves every call: a whole-buffer decode keeps no state between calls. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Decodes bytes as UTF-8, refusing malformed sequences (a leading byte-order mark is dropped, as JSON allows). */
export function decodeUtf8(bytes: Uint8Array, what = "request body"): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new InvalidUtf8(what);
  }
}

/** The body as text: within the limit and strict UTF-8. */
export async function readBodyText(request: HasBody, limit: BodyLimit): Promise<string> {
  return decodeUtf8(await readBodyBytes(request, limit));
}

/** JSON text nested deeper than a service's limit. */
export class JsonTooDeep extends HttpError {
  override name = "JsonTooDeep";
  constructor(readonly maxDepth: number) {
    super(400, `request body is nested deeper than ${maxDepth} levels`);
  }
}

/** Refuses JSON text that opens more than `maxDepth` objects and arrays inside one another (counted on the text). */
export function checkJsonDepth(text: string, maxDepth: number): void {
  if (jsonTextTooDeep(text, maxDepth)) throw new JsonTooDeep(maxDepth);
}

/** Parses JSON text, its nesting checked first when a limit is given (so a refused body costs no parse). */
export function parseJsonText(text: string, maxDepth?: number): unknown {
  if (maxDepth !== undefined) checkJsonDepth(text, maxDepth);
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidJsonBody();
  }
}

/** A UTF-16 surrogate without its pair: JSON's \u escapes can spell one, but no UTF-8 text holds it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Whether a string holds a lone surrogate, which no UTF-8 text (and no protobuf string) can carry. */
const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text);
/** A \u escape of a surrogate: strict UTF-8 text can hold a lone surrogate only through one of these. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** Whether JSON text escapes a surrogate: only then can its strings hold a lone one (one look at the text). */
export const escapesSurrogate = (text: string): boolean => SURROGATE_ESCAPE.test(text);

/**
 * Refuses a parsed JSON value holding a lone surrogate in a key or a string (D1 would store it as U+FFFD), as
 * InvalidUtf8. Walks with its own stack; looks only when its text escapes a surrogate at all.
 */
export function refuseLoneSurrogates(root: unknown, text: string): void {
  if (!SURROGATE_ESCAPE.test(text)) return;
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === "string") {
      if (hasLoneSurrogate(value)) throw new InvalidUtf8();
    } else if (value !== null && typeof value === "object") {
      for (const key in value) pending.push(key, (value as Record<string, unknown>)[key]);
    }
  }
}

/** The body as JSON: within the limit, strict UTF-8, nested no deeper than `maxDepth` if given, and JSON. */
export async function readJsonBodyWithin(request: HasBody, limit: BodyLimit, maxDepth?: number): Promise<unknown> {
  return parseJsonText(await readBodyText(request, limit), maxDepth);
}

/** A Content-Type the route does not take; `type` is the media type sent ("" when none was). */
export class UnsupportedMediaType extends HttpError {
  override name = "UnsupportedMediaType";
  constructor(
    readonly type: string,
    readonly accepted: readonly string[],
  ) {
    super(
      415,
      `Content-Type must be one of ${accepted.join(", ")}, this request's is ${type === "" ? "missing" : `'${type}'`}`,
    );
  }
}

/** The media type of a Content-Type header, lower-cased and without parameters ("" when there is none). */
export const mediaTypeOf = (headers: Headers): string =>
  (headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();

/** Refuses a body whose media type is none of `accepted` (checked before a byte is read). */
export function requireMediaType(request: HasBody, accepted: readonly string[]): void {
  const type = mediaTypeOf(request.headers);
  if (!accepted.includes(type)) throw new UnsupportedMediaType(type, accepted);
}

/** The default limit of a JSON API body: 1 MiB. */
export const DEFAULT_JSON_BODY_LIMIT_BYTES = 1024 * 1024;
