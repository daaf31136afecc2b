// The codecs between the wire and the core's request/response model. The proto3 JSON codec of /json decodes a
// RateLimitRequest with protojson's rules (JSON or original field names, numbers as numbers or strings, enums as
// names or numbers, unknown fields refused) and encodes a RateLimitResponse with proto3 JSON mapping (camelCase, zero
// values omitted, enums as names). The message codec converts the generated messages of rls.proto, so the Connect,
// gRPC-Web and raw application/proto paths decide exactly like POST /json (same request, same answer).
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  DEFAULT_REQUEST_LIMITS,
  descriptorCountProblem,
  entryCountProblem,
  jsonTextTooDeep,
  tooDeep,
  type RequestLimits,
} from "../core/limits";
import {
  JsonFailure,
  parseBool,
  parseList,
  parseString,
  parseUint32,
  parseUint64Wrapper,
  parseUnit,
  readFields,
} from "../core/proto-json";
import { err, ok, type Result } from "../core/result";
import type {
  DescriptorEntry,
  LimitOverride,
  RateLimitDescriptor,
  RateLimitRequest,
  RateLimitResponse,
} from "../core/types";
import { unitFromNumber } from "../core/units";
import {
  RateLimitResponse_Code,
  RateLimitResponse_RateLimit_Unit,
  type RateLimitRequest as ProtoRateLimitRequest,
  type RateLimitResponseSchema,
} from "../gen/envoy/service/ratelimit/v3/rls_pb";

const MAX_EXACT_HITS = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Decodes a request message into the core's model. Enum numbers map like the /json codec's (an override unit
 * the core does not know becomes UNKNOWN, which the core refuses with its own message). The descriptor and entry
 * counts are refused with /json's messages.
 * @returns the request, or a message naming the field that cannot be represented or the limit it passes.
 */
export function requestFromProto(
  message: ProtoRateLimitRequest,
  limits: RequestLimits,
): Result<RateLimitRequest, string> {
  const tooMany = descriptorCountProblem(message.descriptors.length, limits);
  if (tooMany !== undefined) return err(tooMany);
  const descriptors: RateLimitDescriptor[] = [];
  for (const [index, given] of message.descriptors.entries()) {
    const tooManyEntries = entryCountProblem(index, given.entries.length, limits);
    if (tooManyEntries !== undefined) return err(tooManyEntries);
    const descriptor: RateLimitDescriptor = { entries: given.entries.map(({ key, value }) => ({ key, value })) };
    if (given.limit !== undefined) {
      const unit = unitFromNumber(given.limit.unit) ?? "UNKNOWN";
      descriptor.limit = { requestsPerUnit: given.limit.requestsPerUnit, unit };
    }
    if (given.hitsAddend !== undefined) {
      // /json refuses the same values: counters are JavaScript numbers.
      if (given.hitsAddend > MAX_EXACT_HITS) {
        return err(`descriptor ${index}: hits_addend ${given.hitsAddend} is larger than 2^53 - 1`);
      }
      descriptor.hitsAddend = Number(given.hitsAddend);
    }
    descriptors.push(descriptor);
  }
  return ok({ domain: message.domain, descriptors, hitsAddend: message.hitsAddend });
}

/** Encodes a decision as the response message; zero values stay implicit, as in proto3 JSON of /json. */
export function responseToProto(response: RateLimitResponse): MessageInitShape<typeof RateLimitResponseSchema> {
  return {
    overallCode: RateLimitResponse_Code[response.overallCode],
    statuses: response.statuses.map((status) => ({
      code: RateLimitResponse_Code[status.code],
      currentLimit: status.currentLimit && {
        name: status.currentLimit.name ?? "",
        requestsPerUnit: status.currentLimit.requestsPerUnit,
        unit: RateLimitResponse_RateLimit_Unit[status.currentLimit.unit],
      },
      limitRemaining: status.limitRemaining,
      durationUntilReset:
        status.durationUntilResetSeconds === undefined
          ? undefined
          : { seconds: BigInt(status.durationUntilResetSeconds) },
    })),
    responseHeadersToAdd: response.responseHeadersToAdd.map(({ key, value }) => ({ key, value })),
  };
}

// ---- proto3 JSON (POST /json)

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
