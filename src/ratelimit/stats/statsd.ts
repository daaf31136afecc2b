// statsd and tagged statsd (DogStatsD) lines for a flush, and the mogrifiers that rewrite a stat name into a name
// plus tags (TAGGED_METRICSD_MOGRIFIERS). Pure: no Workers imports (tested in plain Node).
import type { StatEntry } from "./buffer";
import { nameWithTags, type Tags } from "./names";
import { err, ok, type Result } from "../../shared/result";

/** One rewrite: the first mogrifier whose pattern matches a name gives its new name and extra tags. */
export interface Mogrifier {
  name: string;
  pattern: RegExp;
  /** New name; `$0`..`$n` are the pattern's groups. */
  template: string;
  /** Tags whose values may use `$0`..`$n`, in the order given. */
  tags: Tags;
}

/** Replaces `$n` by group n; a `$n` beyond the groups stays as written, as the reference leaves it. */
function expandGroups(template: string, groups: RegExpExecArray): string {
  return template.replace(/\$(\d+)/g, (whole, digits: string) => {
    const index = Number(digits);
    return index < groups.length ? (groups[index] ?? "") : whole;
  });
}

/** The name and tags a stat is sent under: the first matching mogrifier's rewrite, else the name unchanged. */
export function mogrify(name: string, mogrifiers: readonly Mogrifier[]): { name: string; tags: Tags } {
  for (const mogrifier of mogrifiers) {
    const groups = mogrifier.pattern.exec(name);
    if (!groups) continue;
    return {
      name: expandGroups(mogrifier.template, groups),
      tags: mogrifier.tags.map(([key, value]) => [key, expandGroups(value, groups)]),
    };
  }
  return { name, tags: [] };
}

type Env = Record<string, unknown>;

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/**
 * Reads the mogrifiers named in TAGGED_METRICSD_MOGRIFIERS (else DOG_STATSD_MOGRIFIERS, else the reference's actual
 * USE_DOG_STATSD_MOGRIFIERS), each from TAGGED_METRICSD_MOGRIFIER_<N>_PATTERN / _NAME / _TAGS (else the
 * DOG_STATSD_MOGRIFIER_<N>_* aliases). Like the reference, a missing pattern or name, a bad regular expression or an
 * empty tag key or value is an error; its message names the variable.
 */
export function parseMogrifiers(env: Env): Result<Mogrifier[], { variable: string; message: string }> {
  const listName = ["TAGGED_METRICSD_MOGRIFIERS", "DOG_STATSD_MOGRIFIERS", "USE_DOG_STATSD_MOGRIFIERS"].find((n) =>
    text(env[n]),
  );
  if (!listName) return ok([]);
  const names = text(env[listName])!
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  const mogrifiers: Mogrifier[] = [];
  for (const name of names) {
    const variable = (suffix: string) => {
      const spec = `TAGGED_METRICSD_MOGRIFIER_${name}_${suffix}`;
      const alias = `DOG_STATSD_MOGRIFIER_${name}_${suffix}`;
      return text(env[spec]) !== undefined
        ? { key: spec, value: text(env[spec]) }
        : { key: alias, value: text(env[alias]) };
    };
    const pattern = variable("PATTERN");
    const template = variable("NAME");
    const tagList = variable("TAGS");
    if (pattern.value === undefined)
      return err({ variable: `TAGGED_METRICSD_MOGRIFIER_${name}_PATTERN`, message: "is required" });
    if (template.value === undefined)
      return err({ variable: `TAGGED_METRICSD_MOGRIFIER_${name}_NAME`, message: "is required" });
    let regex: RegExp;
    try {
      regex = new RegExp(pattern.value);
    } catch {
      return err({ variable: pattern.key, message: "is not a valid regular expression" });
    }
    const tags: Tags = [];
    for (const entry of (tagList.value ?? "").split(",")) {
      if (entry.trim() === "") continue;
      const colon = entry.indexOf(":");
      const key = colon < 0 ? "" : entry.slice(0, colon).trim();
      const value = colon < 0 ? "" : entry.slice(colon + 1).trim();
      if (key === "" || value === "")
        return err({ variable: tagList.key, message: `tag "${entry.trim()}" needs a key and a value` });
      tags.push([key, value]);
    }
    mogrifiers.push({ name, pattern: regex, template: template.value, tags });
  }
  return ok(mogrifiers);
}

export interface StatsdFormat {
  /** Tagged (DogStatsD) lines: `name:1|c|#k:v`; else plain statsd with tags in the name (`name.__k=v:1|c`). */
  tagged: boolean;
  /** Applied to tagged lines only. */
  mogrifiers: readonly Mogrifier[];
  /** EXTRA_TAGS. */
  extraTags: Tags;
}

function tagSuffix(tags: Tags): string {
  return tags.length === 0 ? "" : `|#${tags.map(([key, value]) => `${key}:${value}`).join(",")}`;
}

/** Formats a number as statsd expects (no exponent for the values we send). */
const formatValue = (value: number): string =>
  Number.isInteger(value) ? String(value) : String(Math.round(value * 1000) / 1000);

/** The lines of one flush: each counter's change as `|c`, each kept timer sample as `|ms`. */
export function statsdLines(entries: readonly StatEntry[], format: StatsdFormat): string[] {
  const lines: string[] = [];
  for (const entry of entries) {
    let name: string;
    let suffix: string;
    if (format.tagged) {
      const rewritten = mogrify(entry.name, format.mogrifiers);
      name = rewritten.name;
      suffix = tagSuffix([...rewritten.tags, ...format.extraTags]);
    } else {
      name = nameWithTags(entry.name, format.extraTags);
      suffix = "";
    }
    if (entry.kind === "counter") {
      lines.push(`${name}:${formatValue(entry.value)}|c${suffix}`);
    } else {
      for (const sample of entry.samples ?? []) lines.push(`${name}:${formatValue(sample)}|ms${suffix}`);
    }
  }
  return lines;
}
