// The proto3 JSON codec of /json: decodes a RateLimitRequest with protojson's rules (JSON or original field
// names, numbers as numbers or strings, enums as names or numbers, unknown fields refused) and encodes a
// RateLimitResponse with proto3 JSON mapping (camelCase, zero values omitted, enums as names).

import { err, ok, type Result } from "./result";
import type {
  DescriptorEntry,
  LimitOverride,
  RateLimitDescriptor,
  RateLimitRequest,
  RateLimitResponse,
  Unit,
} from "./types";
import { UNIT_NAMES, unitFromNumber } from "./units";

const MAX_UINT32 = 4294967295;

/** Thrown inside this module only; always turned into an error value by parseRateLimitRequestJson. */
class JsonFailure extends Error {}

type JsonObject = Record<string, unknown>;

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Reads the fields of one message. `fields` maps each accepted name (JSON name and original proto name)
 * to its JSON name; a field given under both names, or a name not listed, is refused.
 */
function readFields(value: unknown, message: string, fields: Record<string, string>): Map<string, unknown> {
  if (!isObject(value)) throw new JsonFailure(`${message} must be a JSON object, got ${show(value)}`);
  const out = new Map<string, unknown>();
  for (const [name, fieldValue] of Object.entries(value)) {
    const jsonName = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (jsonName === undefined) throw new JsonFailure(`unknown field "${name}" in ${message}`);
    if (out.has(jsonName)) throw new JsonFailure(`duplicate field "${jsonName}" in ${message}`);
    out.set(jsonName, fieldValue);
  }
  return out;
}

function where(field: string, message: string): string {
  return `field "${field}" in ${message}`;
}

function parseString(value: unknown, field: string, message: string): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  throw new JsonFailure(`invalid value for string ${where(field, message)}: ${show(value)}`);
}

function parseBool(value: unknown, field: string, message: string): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === "boolean") return value;
  throw new JsonFailure(`invalid value for bool ${where(field, message)}: ${show(value)}`);
}

/** An unsigned integer given as a JSON number or a decimal string, at most `max`. */
function parseUnsigned(value: unknown, type: string, max: number, field: string, message: string): number {
  let n: number | undefined;
  if (typeof value === "number" && Number.isInteger(value)) n = value;
  else if (typeof value === "string" && /^\d+$/.test(value)) n = Number(value);
  if (n === undefined || n < 0 || n > max) {
    throw new JsonFailure(`invalid value for ${type} ${where(field, message)}: ${show(value)}`);
  }
  return n;
}

function parseUint32(value: unknown, field: string, message: string): number {
  if (value === null || value === undefined) return 0;
  return parseUnsigned(value, "uint32", MAX_UINT32, field, message);
}

/** google.protobuf.UInt64Value: null means "not set". Values past 2^53 cannot be held exactly: refused. */
function parseUint64Wrapper(value: unknown, field: string, message: string): number | undefined {
  if (value === null || value === undefined) return undefined;
  return parseUnsigned(value, "uint64", Number.MAX_SAFE_INTEGER, field, message);
}

function parseUnit(value: unknown, field: string, message: string): Unit {
  if (value === null || value === undefined) return "UNKNOWN";
  if (typeof value === "string" && (UNIT_NAMES as readonly string[]).includes(value)) return value as Unit;
  const byNumber = typeof value === "number" ? unitFromNumber(value) : undefined;
  if (byNumber !== undefined) return byNumber;
  throw new JsonFailure(`invalid value for enum ${where(field, message)}: ${show(value)}`);
}

function parseList<T>(value: unknown, field: string, message: string, item: (value: unknown) => T): T[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new JsonFailure(`invalid value for repeated ${where(field, message)}: ${show(value)}`);
  }
  return value.map(item);
}

function parseEntry(value: unknown): DescriptorEntry {
  const message = "RateLimitDescriptor.Entry";
  const fields = readFields(value, message, { key: "key", value: "value" });
  return {
    key: parseString(fields.get("key"), "key", message),
    value: parseString(fields.get("value"), "value", message),
  };
}

function parseOverride(value: unknown): LimitOverride {
  const message = "RateLimitOverride";
  const fields = readFields(value, message, {
    requestsPerUnit: "requestsPerUnit",
    requests_per_unit: "requestsPerUnit",
    unit: "unit",
  });
  return {
    requestsPerUnit: parseUint32(fields.get("requestsPerUnit"), "requestsPerUnit", message),
    unit: parseUnit(fields.get("unit"), "unit", message),
  };
}

function parseDescriptor(value: unknown): RateLimitDescriptor {
  const message = "RateLimitDescriptor";
  const fields = readFields(value, message, {
    entries: "entries",
    limit: "limit",
    hitsAddend: "hitsAddend",
    hits_addend: "hitsAddend",
    isNegativeHits: "isNegativeHits",
    is_negative_hits: "isNegativeHits",
  });
  const descriptor: RateLimitDescriptor = {
    entries: parseList(fields.get("entries"), "entries", message, parseEntry),
  };
  const limit = fields.get("limit");
  if (limit !== null && limit !== undefined) descriptor.limit = parseOverride(limit);
  const hitsAddend = parseUint64Wrapper(fields.get("hitsAddend"), "hitsAddend", message);
  if (hitsAddend !== undefined) descriptor.hitsAddend = hitsAddend;
  // Part of the proto, but the reference ignores it; still type-checked like any field.
  parseBool(fields.get("isNegativeHits"), "isNegativeHits", message);
  return descriptor;
}

/**
 * Decodes the body of a /json request (already JSON-parsed).
 * @returns the request, or a message naming the offending field.
 */
export function parseRateLimitRequestJson(body: unknown): Result<RateLimitRequest, string> {
  const message = "RateLimitRequest";
  try {
    const fields = readFields(body, message, {
      domain: "domain",
      descriptors: "descriptors",
      hitsAddend: "hitsAddend",
      hits_addend: "hitsAddend",
    });
    return ok({
      domain: parseString(fields.get("domain"), "domain", message),
      descriptors: parseList(fields.get("descriptors"), "descriptors", message, parseDescriptor),
      hitsAddend: parseUint32(fields.get("hitsAddend"), "hitsAddend", message),
    });
  } catch (e) {
    if (e instanceof JsonFailure) return err(e.message);
    throw e;
  }
}

/**
 * Encodes a response in proto3 JSON mapping, fields in proto order: zero values (0, "", UNKNOWN, empty
 * lists) are omitted, message fields are present whenever set, durations are strings like "58s".
 */
export function rateLimitResponseToJson(response: RateLimitResponse): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (response.overallCode !== "UNKNOWN") out.overallCode = response.overallCode;
  if (response.statuses.length > 0) {
    out.statuses = response.statuses.map((status) => {
      const json: Record<string, unknown> = {};
      if (status.code !== "UNKNOWN") json.code = status.code;
      const current = status.currentLimit;
      if (current !== undefined) {
        const limit: Record<string, unknown> = {};
        if (current.requestsPerUnit !== 0) limit.requestsPerUnit = current.requestsPerUnit;
        if (current.unit !== "UNKNOWN") limit.unit = current.unit;
        if (current.name) limit.name = current.name;
        json.currentLimit = limit;
      }
      if (status.limitRemaining !== 0) json.limitRemaining = status.limitRemaining;
      if (status.durationUntilResetSeconds !== undefined) {
        json.durationUntilReset = `${status.durationUntilResetSeconds}s`;
      }
      return json;
    });
  }
  if (response.responseHeadersToAdd.length > 0) {
    out.responseHeadersToAdd = response.responseHeadersToAdd.map((header) =>
      header.value === "" ? { key: header.key } : { key: header.key, value: header.value },
    );
  }
  return out;
}
