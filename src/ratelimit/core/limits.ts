// Limits on what the rate limit service reads (request bodies, descriptors, configuration files), with the checks that
// need no parsing. Every refusal names the limit and the setting that raises it, so a caller knows what to change.

/** A limit and the setting that holds it (src/ratelimit/settings.ts). */
export interface Limit {
  max: number;
  setting: string;
}

/** What one ShouldRateLimit call (POST /json, Connect, gRPC-Web, the reverse bridge) may hold. */
export interface RequestLimits {
  descriptors: Limit;
  entries: Limit;
  depth: Limit;
  /** UTF-8 bytes of the domain and of each entry's key and value. */
  valueBytes: Limit;
}

/** What one configuration set may hold. */
export interface ConfigLimits {
  /** UTF-8 bytes of one YAML file (or of the YAML an xDS resource becomes). */
  fileBytes: Limit;
  /** YAML nodes that aliases may add, counted across the whole set. */
  aliasNodes: Limit;
  /** Nested collections (YAML maps and sequences, JSON objects and arrays). */
  depth: Limit;
}

/** The defaults of the settings; src/ratelimit/settings.ts reads its defaults from here. */
export const DEFAULT_LIMITS = {
  RATELIMIT_MAX_REQUEST_BYTES: 1024 * 1024,
  RATELIMIT_MAX_DESCRIPTORS: 64,
  RATELIMIT_MAX_DESCRIPTOR_ENTRIES: 32,
  RATELIMIT_MAX_VALUE_BYTES: 64 * 1024,
  RATELIMIT_MAX_NESTING_DEPTH: 100,
  RATELIMIT_CONFIG_MAX_BODY_BYTES: 4 * 1024 * 1024,
  RATELIMIT_CONFIG_MAX_FILES: 100,
  RATELIMIT_CONFIG_MAX_FILE_BYTES: 512 * 1024,
  RATELIMIT_CONFIG_MAX_ALIAS_NODES: 10_000,
} as const;

const limitOf = (setting: keyof typeof DEFAULT_LIMITS): Limit => ({ max: DEFAULT_LIMITS[setting], setting });

export const DEFAULT_REQUEST_LIMITS: RequestLimits = {
  descriptors: limitOf("RATELIMIT_MAX_DESCRIPTORS"),
  entries: limitOf("RATELIMIT_MAX_DESCRIPTOR_ENTRIES"),
  depth: limitOf("RATELIMIT_MAX_NESTING_DEPTH"),
  valueBytes: limitOf("RATELIMIT_MAX_VALUE_BYTES"),
};

export const DEFAULT_CONFIG_LIMITS: ConfigLimits = {
  fileBytes: limitOf("RATELIMIT_CONFIG_MAX_FILE_BYTES"),
  aliasNodes: limitOf("RATELIMIT_CONFIG_MAX_ALIAS_NODES"),
  depth: limitOf("RATELIMIT_MAX_NESTING_DEPTH"),
};

/** "64 (the limit set by RATELIMIT_MAX_DESCRIPTORS)": the tail of every refusal. */
export const limitText = (limit: Limit, unit = ""): string => `${limit.max}${unit} (the limit set by ${limit.setting})`;

export const tooDeep = (subject: string, limit: Limit): string =>
  `${subject} is nested deeper than ${limitText(limit, " levels")}`;

/** The refusal of a request with more descriptors than allowed, if it has more. */
export function descriptorCountProblem(count: number, limits: RequestLimits): string | undefined {
  if (count <= limits.descriptors.max) return undefined;
  return `the request has ${count} descriptors, more than ${limitText(limits.descriptors)}`;
}

/** The refusal of a descriptor with more entries than allowed, if it has more. */
export function entryCountProblem(index: number, count: number, limits: RequestLimits): string | undefined {
  if (count <= limits.entries.max) return undefined;
  return `descriptor ${index} has ${count} entries, more than ${limitText(limits.entries)}`;
}

/**
 * The most UTF-8 bytes of a descriptor's part of its counter key (`domain_` and `key_value_` per entry; the stores add
 * CACHE_KEY_PREFIX and the window). A Durable Object's SQLite row holds 2 MB, key included, and its name is that key;
 * a Redis key may hold 512 MB. RATELIMIT_MAX_VALUE_BYTES and the request body limit keep keys far below this at their
 * defaults: it holds whatever those settings are raised to.
 */
export const MAX_COUNTER_KEY_BYTES = 1024 * 1024;

/** The UTF-8 length of `text` when it is longer than `limit`, else undefined. */
function bytesOver(text: string, limit: Limit): number | undefined {
  // A UTF-16 unit is at most 3 UTF-8 bytes: nearly every string is settled without counting.
  if (text.length * 3 <= limit.max) return undefined;
  const bytes = utf8Length(text);
  return bytes > limit.max ? bytes : undefined;
}

const tooLong = (subject: string, bytes: number, limit: Limit) =>
  `${subject} is ${bytes} bytes long, more than ${limitText(limit)}`;

/** The refusal of a domain longer than RATELIMIT_MAX_VALUE_BYTES, if it is. */
export function domainSizeProblem(domain: string, limits: RequestLimits): string | undefined {
  const bytes = bytesOver(domain, limits.valueBytes);
  return bytes === undefined ? undefined : tooLong("the domain", bytes, limits.valueBytes);
}

/**
 * The refusal of a descriptor with a key or value longer than RATELIMIT_MAX_VALUE_BYTES, or whose counter key would
 * pass MAX_COUNTER_KEY_BYTES, if it has one. Only bytes are counted: nothing is built or encoded (the hot path).
 */
export function entrySizeProblem(
  index: number,
  domain: string,
  entries: readonly { key: string; value: string }[],
  limits: RequestLimits,
): string | undefined {
  let units = domain.length + 1;
  for (let at = 0; at < entries.length; at++) {
    const { key, value } = entries[at];
    const keyBytes = bytesOver(key, limits.valueBytes);
    if (keyBytes !== undefined) return tooLong(`descriptor ${index} entry ${at}: the key`, keyBytes, limits.valueBytes);
    const valueBytes = bytesOver(value, limits.valueBytes);
    if (valueBytes !== undefined) {
      return tooLong(`descriptor ${index} entry ${at}: the value`, valueBytes, limits.valueBytes);
    }
    units += key.length + value.length + 2;
  }
  if (units * 3 <= MAX_COUNTER_KEY_BYTES) return undefined;
  let bytes = utf8Length(domain) + 1;
  for (const { key, value } of entries) bytes += utf8Length(key) + utf8Length(value) + 2;
  if (bytes <= MAX_COUNTER_KEY_BYTES) return undefined;
  return (
    `descriptor ${index} makes a counter key of ${bytes} bytes, ` +
    `more than the ${MAX_COUNTER_KEY_BYTES} the counter stores are given`
  );
}

/** The UTF-8 length of a string, without encoding it (a lone surrogate counts as the 3 bytes of U+FFFD). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
