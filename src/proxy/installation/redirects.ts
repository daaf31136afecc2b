// The URL rules of redirecting domains (pure): which redirect URLs the API accepts, the message when it does not, and
// the prefix a `*` URL redirects to. The repositories check with them on write, the HAProxy generator again on output.

const REDIRECT_URL =
  /^https?:\/\/[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::\d{1,5})?(?:\/[^\s*\x00-\x1f\x7f]*)?$/;

/**
 * An http or https URL with a lower-case host, optional port and path. A trailing `*` (usually `/*`) asks
 * the redirect to keep the request path and is not part of the URL checked.
 */
export function isValidRedirectUrl(url: string): boolean {
  return REDIRECT_URL.test(url.endsWith("*") ? url.slice(0, -1) : url);
}

export const invalidRedirect = (domainName: string, url: string) => `${domainName}: invalid redirect URL ${url}`;

/** The redirect target of a permprefix/tempprefix domain: the URL without its trailing `/*` or `*`. */
export function redirectPrefix(url: string): string {
  return url.endsWith("/*") ? url.slice(0, -2) : url.slice(0, -1);
}
