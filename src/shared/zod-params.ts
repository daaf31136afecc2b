// Request parameters every service's schemas share, built on the Worker's z (./zod). A number's bounds are the
// documented ones, so they are what a refusal names.
import { z } from "./zod";

/**
 * An integer from `min` to `max` given as text (query strings, form fields) or as a JSON number. A number out of bounds
 * is refused for its bounds alone: zod's integer check, which would also refuse a number past JavaScript's safe
 * integers naming that limit (9007199254740991), only runs on a number within them.
 */
export const integerParam = (min: number, max: number) =>
  z.coerce.number().min(min, { abort: true }).max(max, { abort: true }).int();
