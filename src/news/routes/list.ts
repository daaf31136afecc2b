// querymen's list conventions for GET /users and GET /news: `sort` as a comma list with "-" for descending,
// `fields` as a comma list (with "-field" to leave one out; id is always kept), the total in X-Total-Count.
import { validationError } from "../errors";
import type { SortKey } from "../store/sort";

/**
 * Parses sort keys against the fields a list may be sorted by; an unknown field is a 400 naming `sort`. A field named
 * twice is sorted on once, as querymen's sort object did: in the place it was first named, in the direction it was
 * last given (`title,-source,-title` sorts by title descending, then source). A second ORDER BY term on one column
 * could never change the order; the schema bounds how many terms come (maxSortTerms).
 */
export function parseSort<F extends string>(keys: string[], allowed: readonly F[]): SortKey<F>[] {
  const descendingBy = new Map<F, boolean>();
  for (const key of keys) {
    const field = key.replace(/^[-+]/, "");
    if (!(allowed as readonly string[]).includes(field)) {
      throw validationError({
        name: "enum",
        param: "sort",
        value: keys.join(","),
        enum: [...allowed],
        message: `sort must be one of: ${allowed.join(", ")} (with - for descending)`,
      });
    }
    descendingBy.set(field as F, key.startsWith("-"));
  }
  return [...descendingBy].map(([field, descending]) => ({ field, descending }));
}

/** Keeps the requested fields of each item (or drops the "-" ones); id always stays; unknown names are ignored. */
export function selectFields<T extends { id: unknown }>(items: T[], fields: string[] | undefined): Partial<T>[] {
  if (!fields || fields.length === 0) return items;
  const excluded = fields.filter((field) => field.startsWith("-")).map((field) => field.slice(1));
  const included = fields.filter((field) => !field.startsWith("-"));
  return items.map((item) => {
    const entries = Object.entries(item).filter(([key]) =>
      key === "id" ? true : included.length > 0 ? included.includes(key) : !excluded.includes(key),
    );
    return Object.fromEntries(entries) as Partial<T>;
  });
}

export const totalCountHeader = (total: number) => ({ "X-Total-Count": String(total) });
