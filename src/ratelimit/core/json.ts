// The proto3 JSON codec of /json: decodes a RateLimitRequest with protojson's rules (JSON or original field
// names, numbers as numbers or strings, enums as names or numbers, unknown fields refused) and encodes a
// RateLimitResponse with proto3 JSON mapping (camelCase, zero values omitted, enums as names).

import {
  DEFAULT_REQUEST_LIMITS,
  descriptorCountProblem,
  entryCountProblem,
  jsonTextTooDeep,
  tooDeep,
  type RequestLimits,
} from "./limits";
import { err, ok, type Result } from "./result";
import type { DescriptorEntry, LimitOverride, RateLimitDescriptor, RateLimitRequest, RateLimitResponse } from "./types";
import {
  JsonFailure,
  parseBool,
  parseList,
  parseString,
  parseUint32,
  parseUint64Wrapper,
  parseUnit,
  readFields,
} from "./proto-json";

function parseEntry(value: unknown): DescriptorEntry {
  const message = "RateLimitDescriptor.Entry";
  const fields = readFields(value, message, ["key", "value"]);
  return {
    key: parseString(fields.get("key"), "key", message),
    value: parseString(fields.get("value"), "value", message),
  };
}

function parseOverride(value: unknown): LimitOverride {
  const message = "RateLimitOverride";
  const fields = readFields(value, message, ["requestsPerUnit", "unit"]);
  return {
    requestsPerUnit: parseUint32(fields.get("requestsPerUnit"), "requestsPerUnit", message),
    unit: parseUnit(fields.get("unit"), "unit", message),
  };
}

function parseDescriptor(value: unknown, index: number, limits: RequestLimits): RateLimitDescriptor {
  const message = "RateLimitDescriptor";
  const fields = readFields(value, message, ["entries", "limit", "hitsAddend", "isNegativeHits"]);
  const entries = fields.get("entries");
  const tooMany = Array.isArray(entries) ? entryCountProblem(index, entries.length, limits) : undefined;
  if (tooMany !== undefined) throw new JsonFailure(tooMany);
  const descriptor: RateLimitDescriptor = { entries: parseList(entries, "entries", message, parseEntry) };
  const limit = fields.get("limit");
  if (limit !== null && limit !== undefined) descriptor.limit = parseOverride(limit);
  const hitsAddend = parseUint64Wrapper(fields.get("hitsAddend"), "hitsAddend", message);
  if (hitsAddend !== undefined) descriptor.hitsAddend = hitsAddend;
  // Part of the proto, but the reference ignores it; still type-checked like any field.
  parseBool(fields.get("isNegativeHits"), "isNegativeHits", message);
  return descriptor;
}

/**
 * Decodes the body of a /json request (already JSON-parsed). The descriptor and entry counts are checked before their
 * lists are read, so a refused request costs no more than its parse.
 * @returns the request, or a message naming the offending field or limit.
 */
export function parseRateLimitRequestJson(
  body: unknown,
  limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
): Result<RateLimitRequest, string> {
  const message = "RateLimitRequest";
  try {
    const fields = readFields(body, message, ["domain", "descriptors", "hitsAddend"]);
    const descriptors = fields.get("descriptors");
    const tooMany = Array.isArray(descriptors) ? descriptorCountProblem(descriptors.length, limits) : undefined;
    if (tooMany !== undefined) return err(tooMany);
    return ok({
      domain: parseString(fields.get("domain"), "domain", message),
      descriptors: parseList(descriptors, "descriptors", message, (item, i) => parseDescriptor(item, i, limits)),
      hitsAddend: parseUint32(fields.get("hitsAddend"), "hitsAddend", message),
    });
  } catch (e) {
    if (e instanceof JsonFailure) return err(e.message);
    throw e;
  }
}

/**
 * Decodes the text of a /json body: its nesting checked before it is parsed, then parsed and decoded.
 * @returns the request, or the message of the 400 that refuses it.
 */
export function parseRateLimitRequestText(
  text: string,
  limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
): Result<RateLimitRequest, string> {
  if (jsonTextTooDeep(text, limits.depth.max)) return err(tooDeep("request body", limits.depth));
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return err("request body is not valid JSON");
  }
  return parseRateLimitRequestJson(body, limits);
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
