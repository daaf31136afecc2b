// Domain names as the ownership rules read them (pure): the reversed form that puts every name under a domain in one
// index range, and the names above a domain that can claim it.

/** The labels in reverse order (`login.beta-corp.example` → `example.beta-corp.login`), as domains.reversed_name. */
export const reversedName = (name: string) => name.split(".").reverse().join(".");

/**
 * The bounds of the names strictly under a reversed name, as an index range: `example.beta-corp.` up to (not
 * including) `example.beta-corp/`, `/` being the character after `.`, and no host name holding either.
 */
export const rangeUnder = (reversed: string) => ({ from: `${reversed}.`, to: `${reversed}/` });

/** The name and every name above it, nearest first (`a.b.example`, `b.example`, `example`): where a zone may be. */
export function selfAndAncestors(name: string): string[] {
  const names = [name];
  for (let dot = name.indexOf("."); dot >= 0; dot = name.indexOf(".", dot + 1)) names.push(name.slice(dot + 1));
  return names;
}

/**
 * The names above `name` whose holder keeps it from other projects: all but top-level ones, so that a project holding
 * `com` (a single label, which any host name may be) claims nothing under it.
 */
export const claimingAncestors = (name: string) =>
  selfAndAncestors(name)
    .slice(1)
    .filter((above) => above.includes("."));
