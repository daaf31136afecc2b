// Request validation for every route: a zod schema per target whose failure becomes a 400 naming the field,
// thrown as HttpError so each service's onError renders it in its own wire format.
import type { Context, MiddlewareHandler, ValidationTargets } from "hono";
import { validator } from "hono/validator";
import { z } from "../zod";
import { HttpError } from "./errors";
import { readJsonBodyWithin, type BodyLimit } from "./request-body";
import { recordUnknownFields, unknownFields } from "./unknown-fields";

/** Renders zod issues as "field: message" (just the message for the root), at most three of them. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => (issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ");
}

export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new HttpError(400, describeZodError(parsed.error));
  return parsed.data;
}

type Validated<T extends keyof ValidationTargets, S extends z.ZodType> = {
  in: { [K in T]: z.input<S> };
  out: { [K in T]: z.output<S> };
};

/**
 * Hono middleware validating one request target with a zod schema; `c.req.valid(target)` then has the
 * parsed type. JSON bodies are parsed whatever their Content-Type says (curl's -d sends form encoding),
 * and a body that is not JSON gets our own 400 wording rather than Hono's; one over the limit gets 413 and one
 * that is not UTF-8 a 400. Fields the schema does not name are dropped and kept on the context
 * (requestUnknownFieldWarnings), so that the answer can name them.
 */
/**
 * Deepest JSON a validated body may nest (the proxy API's bodies nest 3 levels); deeper answers 400 before zod walks
 * it. The news API and the rate limit service read their bodies with their own documented depths.
 */
export const MAX_JSON_DEPTH = 32;

export function validate<T extends keyof ValidationTargets, S extends z.ZodType>(
  target: T,
  schema: S,
  /** The service's body limit (json only): a larger body is refused with 413 before it is parsed. */
  bodyLimit?: (env: object) => BodyLimit,
): MiddlewareHandler<any, string, Validated<T, S>> {
  if (target === "json") {
    if (!bodyLimit) throw new Error('validate("json") needs the service\'s body limit');
    return async (c: Context, next) => {
      const body = await readJsonBodyWithin(c.req.raw.clone(), bodyLimit(c.env), MAX_JSON_DEPTH);
      c.req.addValidatedData("json", parseOrThrow(schema, body) as object);
      recordUnknownFields(c, unknownFields(schema, body));
      await next();
    };
  }
  return validator(target, (value: unknown) => parseOrThrow(schema, value) as object) as MiddlewareHandler<
    any,
    string,
    Validated<T, S>
  >;
}
