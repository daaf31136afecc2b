// When an ACME certificate is renewed (pure: it takes certificates and the CA's answers): its ACME Renewal Information
// certificate ID (RFC 9773 §4.1), the CA's suggested window read as untrusted input, the point chosen in it, when to
// ask the CA again (Retry-After), and, when the CA gives no window, the point where a third of the lifetime remains.
import { toBase64Url } from "../../shared/bytes";
import type { CertificateInfo } from "./x509";

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** The certificate job's schedule: the daily cron of src/job-registry.ts. */
export const SCHEDULED_RUN_INTERVAL_MS = DAY_MS;
/** RFC 9773 §4.3 asks clients to bound the CA's Retry-After; without one the CA is asked again after 6 hours. */
export const RETRY_AFTER_BOUNDS_MS = { min: MINUTE_MS, max: DAY_MS, absent: 6 * HOUR_MS } as const;
/** A RenewalInfo body is a few hundred bytes; anything longer than this is refused unread. */
export const MAX_RENEWAL_INFO_BYTES = 16_384;
const MAX_EXPLANATION_URL_LENGTH = 1000;

/**
 * The ARI certificate ID: base64url of the Authority Key Identifier's keyIdentifier, ".", base64url of the serial
 * number's DER content octets. Undefined for a certificate without a keyIdentifier (ARI cannot name it).
 */
export function ariCertificateId(
  info: Pick<CertificateInfo, "authorityKeyIdentifier" | "serialBytes">,
): string | undefined {
  if (!info.authorityKeyIdentifier || info.serialBytes.length === 0) return undefined;
  return `${toBase64Url(info.authorityKeyIdentifier)}.${toBase64Url(info.serialBytes)}`;
}

/** The renewal time of a certificate the CA gives no window for: when a third of its lifetime remains. */
export const oneThirdLeft = (certificate: { notBefore: Date; notAfter: Date }) =>
  new Date(certificate.notAfter.getTime() - (certificate.notAfter.getTime() - certificate.notBefore.getTime()) / 3);

export interface RenewalWindow {
  start: Date;
  end: Date;
  /** A page where the CA explains the window (shown to the administrator, never followed). */
  explanationUrl?: string;
}

/** A RenewalInfo answer that cannot be used (RFC 9773 §4.2: treated as no answer). */
export class RenewalInfoError extends Error {
  override name = "RenewalInfoError";
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function timestamp(value: unknown, what: string): Date {
  if (typeof value !== "string" || !RFC3339.test(value)) throw new RenewalInfoError(`${what} is not an RFC 3339 time`);
  const date = new Date(value.toUpperCase());
  if (Number.isNaN(date.getTime())) throw new RenewalInfoError(`${what} is not a valid time`);
  return date;
}

/** Whether a value the CA sent is an http(s) URL (the directory's endpoints, a window's explanation). */
export function isHttpUrl(value: unknown): value is string {
  return typeof value === "string" && URL.canParse(value) && ["https:", "http:"].includes(new URL(value).protocol);
}

const explanationUrl = (value: unknown): string | undefined =>
  isHttpUrl(value) && value.length <= MAX_EXPLANATION_URL_LENGTH ? new URL(value).href : undefined;

/**
 * Reads the body of a RenewalInfo answer (the CA's JSON, untrusted): `suggestedWindow.start` before `.end`, both RFC
 * 3339 times, and the window ending no later than the certificate (a window after its end would let it lapse). An
 * `explanationURL` that is not an http(s) URL is dropped. Throws RenewalInfoError.
 */
export function readRenewalInfo(text: string, certificate: { notAfter: Date }): RenewalWindow {
  if (text.length > MAX_RENEWAL_INFO_BYTES) throw new RenewalInfoError("the answer is too long");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new RenewalInfoError("the answer is not JSON");
  }
  const window = body && typeof body === "object" ? (body as { suggestedWindow?: unknown }).suggestedWindow : undefined;
  if (!window || typeof window !== "object") throw new RenewalInfoError("the answer has no suggestedWindow");
  const start = timestamp((window as { start?: unknown }).start, "suggestedWindow.start");
  const end = timestamp((window as { end?: unknown }).end, "suggestedWindow.end");
  if (end.getTime() <= start.getTime())
    throw new RenewalInfoError("suggestedWindow.end does not come after suggestedWindow.start");
  if (end.getTime() > certificate.notAfter.getTime())
    throw new RenewalInfoError(
      `suggestedWindow.end is after the certificate ends (${certificate.notAfter.toISOString()})`,
    );
  const url = explanationUrl((body as { explanationURL?: unknown }).explanationURL);
  return url ? { start, end, explanationUrl: url } : { start, end };
}

/**
 * When the CA may be asked again: its Retry-After (seconds, or an HTTP date) bounded to a minute and a day; 6 hours
 * when it sent none or one that does not read.
 */
export function nextPollAt(retryAfter: string | null, now: Date): Date {
  const { min, max, absent } = RETRY_AFTER_BOUNDS_MS;
  let delay: number = absent;
  const text = retryAfter?.trim() ?? "";
  if (/^\d{1,10}$/.test(text)) delay = Number(text) * 1000;
  else if (/^[A-Za-z]{3}, /.test(text)) {
    const at = Date.parse(text);
    if (Number.isFinite(at)) delay = at - now.getTime();
  }
  return new Date(now.getTime() + Math.min(Math.max(delay, min), max));
}

/**
 * The renewal time in a window (RFC 9773 §4.2): a uniform random point, which spreads the renewals of many
 * certificates over the window as the CA asks. It is drawn from the window less its last scheduled-run interval, so
 * that the run that renews (the first at or after the point) still falls inside a window longer than that interval;
 * a shorter window renews from its start. `random` is in [0, 1).
 */
export function renewalPoint(window: { start: Date; end: Date }, random: number): Date {
  const span = window.end.getTime() - window.start.getTime() - SCHEDULED_RUN_INTERVAL_MS;
  const fraction = Math.min(Math.max(random, 0), 1);
  return new Date(window.start.getTime() + (span > 0 ? Math.floor(span * fraction) : 0));
}

/** Two answers give the same window: the point chosen in it stands (drawing again at every poll would bias it early). */
export const sameWindow = (a: { start: Date; end: Date }, b: { start: Date; end: Date }) =>
  a.start.getTime() === b.start.getTime() && a.end.getTime() === b.end.getTime();

/**
 * When an ACME certificate in use is named in the job's warnings: within `warnDays` of its end, or once a sixth of
 * its lifetime remains if that is sooner (short-lived certificates would otherwise be named at every run).
 */
export function acmeWarningPoint(certificate: { notBefore: Date; notAfter: Date }, warnDays: number): Date {
  const lifetime = certificate.notAfter.getTime() - certificate.notBefore.getTime();
  return new Date(certificate.notAfter.getTime() - Math.min(warnDays * DAY_MS, lifetime / 6));
}
