// The console's routes: the address's fragment (#/projects/shop) read as decoded path segments. Any other fragment,
// such as the skip link's #main, is an in-page link and no route.

/** The segments of a route fragment, or undefined when the fragment is not a route. */
export function routeOf(hash: string): string[] | undefined {
  if (hash !== "" && hash !== "#" && !hash.startsWith("#/")) return undefined;
  return hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeSegment);
}

/** A segment with a malformed escape (`%E0%A4%A`) is kept as typed: the page then names what it cannot find. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
