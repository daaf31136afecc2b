// Fields of a JSON body that its schema does not name, at any depth. Parsing drops them (zod's objects strip unknown
// keys, as the original's JSON-B ignored them), so a misspelled field would vanish without a word; these name them.
import type { Context } from "hono";
import type { z } from "../zod";

/** At most this many unknown fields are named; one more warning counts the rest. */
export const MAX_UNKNOWN_FIELDS_NAMED = 10;
/** A longer field path is cut to this many characters (and "…") in its warning. */
export const MAX_UNKNOWN_FIELD_CHARS = 100;

export interface UnknownFields {
  /** The first MAX_UNKNOWN_FIELDS_NAMED paths, as validation errors name fields (`domainForwardings.0.sslEnabled`). */
  named: string[];
  total: number;
}

/** What the walk reads of a zod schema's definition: the wrappers and containers request bodies are made of. */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  getter?: () => z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"]);

/** The schema that reads the value as it arrives: wrappers and pipes (transforms, preprocessing) looked through. */
function inputSchema(schema: z.ZodType): z.ZodType {
  for (let depth = 0; depth < 32; depth++) {
    const def = defOf(schema);
    if (WRAPPERS.has(def.type) && def.innerType) schema = def.innerType;
    else if (def.type === "lazy" && def.getter) schema = def.getter();
    // A pipe's input is its first schema, unless that is a transform (z.preprocess): then what the transform gives.
    else if (def.type === "pipe" && def.in && def.out) schema = defOf(def.in).type === "transform" ? def.out : def.in;
    else return schema;
  }
  return schema;
}

/** Each schema's input definition, looked up once: a body's thousands of items share a few schemas. */
const inputDefs = new WeakMap<z.ZodType, Def>();
function inputDef(schema: z.ZodType): Def {
  let def = inputDefs.get(schema);
  if (!def) inputDefs.set(schema, (def = defOf(inputSchema(schema))));
  return def;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The keys of `value` (the body as parsed from JSON, already accepted by `schema`) that `schema` does not name, in
 * document order. Objects with a catch-all (loose or strict) have none; unions and tuples are not looked into.
 */
export function unknownFields(schema: z.ZodType, value: unknown): UnknownFields {
  const found: UnknownFields = { named: [], total: 0 };
  walk(schema, value, [], found);
  return found;
}

/** `path` is the way to `value`, pushed and popped as the walk goes; a path is joined only for a field it names. */
function walk(schema: z.ZodType, value: unknown, path: (string | number)[], found: UnknownFields): void {
  const def = inputDef(schema);
  if (def.type === "array" && def.element && Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      path.push(index);
      walk(def.element, value[index], path, found);
      path.pop();
    }
  } else if (def.type === "record" && def.valueType && isRecord(value)) {
    for (const key of Object.keys(value)) {
      path.push(key);
      walk(def.valueType, value[key], path, found);
      path.pop();
    }
  } else if (def.type === "object" && def.shape && !def.catchall && isRecord(value)) {
    for (const key of Object.keys(value)) {
      path.push(key);
      // Own keys only: "constructor" or "__proto__" in a body are not fields of the schema.
      if (Object.hasOwn(def.shape, key)) walk(def.shape[key]!, value[key], path, found);
      else if (found.total++ < MAX_UNKNOWN_FIELDS_NAMED) found.named.push(path.join("."));
      path.pop();
    }
  }
}

/** The warnings naming them: `unknown field "fullName" ignored`, then `... and N more unknown fields ignored`. */
export function unknownFieldWarnings({ named, total }: UnknownFields): string[] {
  const warnings = named.map((path) => {
    const shown = path.length > MAX_UNKNOWN_FIELD_CHARS ? `${path.slice(0, MAX_UNKNOWN_FIELD_CHARS)}…` : path;
    return `unknown field ${JSON.stringify(shown)} ignored`;
  });
  const more = total - named.length;
  if (more > 0) warnings.push(`... and ${more} more unknown field${more === 1 ? "" : "s"} ignored`);
  return warnings;
}

const VARIABLE = "unknownFields";

/** Keeps what validate() found on the request, for the answer. */
export function recordUnknownFields(c: Context, found: UnknownFields): void {
  if (found.total > 0) c.set(VARIABLE as never, found as never);
}

/** The warnings about the request body's unknown fields, [] when there were none (or no body was validated). */
export function requestUnknownFieldWarnings(c: Context): string[] {
  const found = c.get(VARIABLE as never) as UnknownFields | undefined;
  return found ? unknownFieldWarnings(found) : [];
}
