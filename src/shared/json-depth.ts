// The one JSON nesting check: how many objects and arrays a JSON text or value opens inside one another. Body readers
// count the text before (or instead of) walking the parse; loaders of already-parsed data walk the value.

/**
 * Whether JSON text opens more than `max` objects and arrays inside one another. Counted on the text in one pass;
 * brackets inside strings do not count. Text that is not JSON may count wrongly, which only matters if it is then
 * parsed, and JSON.parse refuses it.
 */
export function jsonTextTooDeep(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** Whether a parsed JSON value nests more than `max` objects and arrays (as jsonTextTooDeep counts its text). */
export function jsonValueTooDeep(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [item, outer] = pending.pop()!;
    if (typeof item !== "object" || item === null) continue;
    if (outer + 1 > max) return true;
    for (const child of Object.values(item)) pending.push([child, outer + 1]);
  }
  return false;
}
