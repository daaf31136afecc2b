// Parsing of HTTP Basic credentials (RFC 7617), shared by the proxy API and the news API's login.
import { fromBase64 } from "../bytes";

export interface BasicCredentials {
  username: string;
  password: string;
}

/** Returns the credentials of an `Authorization: Basic ...` header, or undefined when absent or malformed. */
export function parseBasicAuth(header: string | undefined | null): BasicCredentials | undefined {
  const match = /^Basic[ \t]+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(header ?? "");
  if (!match) return undefined;
  let decoded: string;
  try {
    decoded = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(fromBase64(match[1]));
  } catch {
    return undefined;
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Parses `Authorization: Bearer <token>`. */
export function parseBearer(header: string | undefined | null): string | undefined {
  const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}
