// Reading bodies under a byte limit and as strict UTF-8, for every service: a body over the limit is refused before it
// is buffered whole (413), and bytes that are not UTF-8 are refused (400) instead of silently replaced. Requests from
// clients and responses from outside services (publishers' feeds) are read the same way.
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
type HasBody = Pick<Request, "headers" | "body">;

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

/** Decodes bytes as UTF-8, refusing malformed sequences (a leading byte-order mark is dropped, as JSON allows). */
export function decodeUtf8(bytes: Uint8Array, what = "request body"): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new InvalidUtf8(what);
  }
}

/** The body as text: within the limit and strict UTF-8. */
export async function readBodyText(request: HasBody, limit: BodyLimit): Promise<string> {
  return decodeUtf8(await readBodyBytes(request, limit));
}

/** The body as JSON: within the limit, strict UTF-8, and JSON (each failure a 4xx that says which). */
export async function readJsonBodyWithin(request: HasBody, limit: BodyLimit): Promise<unknown> {
  const text = await readBodyText(request, limit);
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidJsonBody();
  }
}

/** The default limit of a JSON API body: 1 MiB. */
export const DEFAULT_JSON_BODY_LIMIT_BYTES = 1024 * 1024;
