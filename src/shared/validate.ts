// Request validation for every route: a zod schema per target whose failure becomes a 400 naming the field,
// thrown as HttpError so each service's onError renders it in its own wire format.
import type { Context, MiddlewareHandler, ValidationTargets } from "hono";
import { validator } from "hono/validator";
import { z } from "zod";
import { HttpError, readJsonBody } from "./errors";

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
 * and a body that is not JSON gets our own 400 wording rather than Hono's.
 */
export function validate<T extends keyof ValidationTargets, S extends z.ZodType>(
  target: T,
  schema: S,
): MiddlewareHandler<any, string, Validated<T, S>> {
  if (target === "json") {
    return async (c: Context, next) => {
      const body = await readJsonBody(c.req.raw.clone());
      c.req.addValidatedData("json", parseOrThrow(schema, body) as object);
      await next();
    };
  }
  return validator(target, (value: unknown) => parseOrThrow(schema, value) as object) as MiddlewareHandler<
    any,
    string,
    Validated<T, S>
  >;
}
