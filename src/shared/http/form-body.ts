// The form decoders of the body reader: application/x-www-form-urlencoded and multipart/form-data as name/value pairs
// of strict UTF-8 text. Routes take no files: multipart bodies are read as UTF-8 whole (request-body.ts) before this.
import { HttpError } from "./errors";
import { InvalidUtf8 } from "./request-body";

/** A multipart/form-data body the runtime cannot split into parts. */
export class MalformedMultipart extends HttpError {
  override name = "MalformedMultipart";
  constructor() {
    super(400, "request body is not valid multipart/form-data");
  }
}

/**
 * One name or value of a URL-encoded form. Unlike URLSearchParams, which puts U+FFFD in place of escapes that decode
 * to bytes that are not UTF-8 (%FF), these are refused as raw ones are; a % that starts no escape stays literal.
 */
function formComponent(raw: string): string {
  if (!raw.includes("%") && !raw.includes("+")) return raw;
  try {
    return decodeURIComponent(raw.replaceAll("+", " ").replace(/%(?![0-9a-f]{2})/gi, "%25"));
  } catch {
    throw new InvalidUtf8("a form field");
  }
}

/** The fields of URL-encoded form text in order, a name without "=" having the value "". */
export function urlEncodedEntries(text: string): [string, string][] {
  const entries: [string, string][] = [];
  for (const pair of text.split("&")) {
    if (pair === "") continue;
    const at = pair.indexOf("=");
    entries.push(
      at < 0 ? [formComponent(pair), ""] : [formComponent(pair.slice(0, at)), formComponent(pair.slice(at + 1))],
    );
  }
  return entries;
}

/** The text fields of a multipart/form-data body, in order (file parts are left out). */
export async function multipartEntries(bytes: Uint8Array, contentType: string): Promise<[string, string][]> {
  let form: FormData;
  try {
    form = await new Response(bytes, { headers: { "content-type": contentType } }).formData();
  } catch {
    throw new MalformedMultipart();
  }
  return [...form.entries()].filter((entry): entry is [string, string] => typeof entry[1] === "string");
}
