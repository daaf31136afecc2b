// Reading a service's settings from the Worker environment: one zod schema per service, parsed once per
// isolate (memoised on the env object), failing with an error that names the variable but never its value. Each
// field carries its kind and default as zod metadata (set by the env* helpers); its meaning lives in the sibling
// *-meanings.ts module, which only the docs generator (test/support/settings-page.ts) imports, so that docs/settings.md
// gets the texts and the Worker bundle does not.
import { z } from "./zod";
import { perIsolate } from "./isolate";

/** What a setting's value looks like, as docs/settings.md names it. */
export type SettingKind = "boolean" | "integer" | "number" | "duration" | "string" | "url" | "choice" | "list";

declare module "zod" {
  interface GlobalMeta {
    /** What the value looks like; set by the env* helpers. */
    kind?: SettingKind;
    /** The values a choice accepts. */
    choices?: readonly string[];
    /** What a list holds, in the plural ("URLs"). */
    items?: string;
    /** The default as an operator would write it ("10s", "1000", "" for empty); absent: unset. */
    default?: string;
    /** Another name that sets this one when this one is unset (the reference service's name for it). */
    alias?: string;
    /** This field is an alias of the named one: docs/settings.md lists it in that one's row. */
    aliasOf?: string;
    /** Set as a Worker secret (`wrangler secret put`; locally in .dev.vars), never in wrangler.toml. */
    secret?: boolean;
  }
}

/** A meaning written over several source lines, as one line: each run of white space becomes one space. */
export const oneLine = (strings: TemplateStringsArray, ...values: unknown[]): string =>
  strings
    .reduce((text, part, index) => text + String(values[index - 1]) + part)
    .replace(/\s+/g, " ")
    .trim();

/**
 * The meanings of a schema's fields, as docs/settings.md gives them: exactly one for each field but those named as
 * aliases (docs/settings.md lists an alias in its setting's row). Held by *-meanings.ts modules, which nothing in the
 * Worker may import (.dependency-cruiser.cjs).
 */
export type SettingMeanings<Field extends PropertyKey, Alias extends Field = never> = Record<
  Exclude<Field, Alias>,
  string
>;

/**
 * A variable read outside any schema (its name varies, or a malformed value must not fail the request), documented
 * in the *-meanings.ts module beside the code that reads it so that docs/settings.md lists it with the schemas' fields.
 */
export interface SettingDoc {
  name: string;
  kind: SettingKind;
  description: string;
  default?: string;
  choices?: readonly string[];
  alias?: string;
}

/**
 * Thrown when a variable or secret is malformed; the message names the variable, never its value. `setting` is that
 * variable when one alone is at fault (npm start's check names it).
 */
export class SettingsError extends Error {
  override name = "SettingsError";
  constructor(
    message: string,
    readonly setting?: string,
  ) {
    super(message);
  }
}

/** A SettingsError of one service's variable: `<service> settings are invalid: <setting>: <problem>`. */
export const invalidSetting = (service: string, setting: string, problem: string) =>
  new SettingsError(`${service} settings are invalid: ${setting}: ${problem}`, setting);

/** An unset variable and an empty one both mean "use the default", as envconfig does for the reference. */
export const unsetIfEmpty = (value: unknown) => (value === "" ? undefined : value);

/**
 * Booleans as operators write them: true/false/1/0 in any case, and t/f, which the reference's envconfig (Go's
 * strconv.ParseBool) also reads. z.coerce.boolean() would read "false" as true.
 */
export const booleanText = () =>
  z.stringbool({ truthy: ["true", "1", "t"], falsy: ["false", "0", "f"], case: "insensitive" });

export const envBoolean = (defaultValue: boolean) =>
  z
    .preprocess(
      unsetIfEmpty,
      booleanText()
        .optional()
        .transform((value) => value ?? defaultValue),
    )
    .meta({ kind: "boolean", default: String(defaultValue) });

export const envString = (defaultValue: string) =>
  z
    .preprocess(unsetIfEmpty, z.string().optional())
    .transform((value) => value ?? defaultValue)
    .meta({ kind: "string", default: defaultValue });

export const envOptionalString = () => z.preprocess(unsetIfEmpty, z.string().optional()).meta({ kind: "string" });

/**
 * An http(s) URL, kept as written, without credentials: such URLs are logged and named in errors, so a password in
 * one would leak. The check of a URL another setting's value (a string) holds.
 */
export const envHttpUrl = () =>
  z.url({ protocol: /^https?$/, message: "must be an http or https URL" }).refine((text) => {
    const url = new URL(text);
    return !url.username && !url.password;
  }, "must be an http or https URL without credentials");

/** A secret: optional, since a service answers without it what it can. */
export const envSecret = () => envOptionalString().meta({ secret: true });

export const envNumber = (defaultValue: number, check: (schema: z.ZodNumber) => z.ZodNumber = (s) => s) =>
  z
    .preprocess(unsetIfEmpty, check(z.coerce.number()).optional())
    .transform((value) => value ?? defaultValue)
    .meta({ kind: "number", default: String(defaultValue) });

export const envInteger = (defaultValue: number, min = 0) =>
  envNumber(defaultValue, (s) => s.int().min(min)).meta({ kind: "integer" });

/** One of a fixed set of words, matched exactly. */
export const envEnum = <const T extends readonly [string, ...string[]]>(choices: T, defaultValue: T[number]) =>
  z
    .preprocess(unsetIfEmpty, z.enum(choices).default(defaultValue as never))
    .meta({ kind: "choice", choices, default: defaultValue });

const durationUnits: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses Go-style durations such as "10s", "1m30s", "150us" or "0" into milliseconds. */
export function parseDurationMs(text: string): number | undefined {
  if (text === "0") return 0;
  const pattern = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  for (const match of text.matchAll(pattern)) {
    total += Number(match[1]) * durationUnits[match[2]];
    consumed += match[0].length;
  }
  return consumed === text.length && consumed > 0 ? total : undefined;
}

/** A Go-style duration variable, read as milliseconds. */
export const envDurationMs = (defaultValue: string) =>
  z
    .preprocess(
      unsetIfEmpty,
      z
        .string()
        .optional()
        .transform((text, ctx) => {
          const ms = parseDurationMs(text ?? defaultValue);
          if (ms === undefined) {
            ctx.addIssue({ code: "custom", message: 'expected a duration such as "10s", "500ms" or "1m"' });
            return z.NEVER;
          }
          return ms;
        }),
    )
    .meta({ kind: "duration", default: defaultValue });

/**
 * The reader of one service's settings: parses an env with `schema` once per env object (the runtime hands every
 * request of an isolate the same env object), so settings cost nothing on the hot path. A malformed env throws a
 * SettingsError naming the variables, each time it is read.
 */
export function settingsReader<S extends z.ZodType>(schema: S, service: string): (env: object) => z.output<S> {
  return perIsolate(`${service} settings`, (env: object) => {
    const parsed = schema.safeParse(env);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
      throw new SettingsError(`${service} settings are invalid: ${problems.join("; ")}`);
    }
    return parsed.data;
  });
}
