// The codecs between the wire and the core's request/response model. The message codec converts the generated messages
// of rls.proto, so the Connect, gRPC-Web and raw application/proto paths decide exactly like POST /json (same request,
// same answer).
import { create, toJson, type MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { InvalidJsonBody } from "../../shared/http/errors";
import { escapesSurrogate, JsonTooDeep, parseJsonText } from "../../shared/http/request-body";
import { repeatedJsonKey } from "../../shared/json-repeated-key";
import { decodeJson } from "../proto-json";
import { commonRequestMessage, commonResponseJson, isJsonObject, type CommonRequestMessage } from "./codec-json-common";
import {
  DEFAULT_REQUEST_LIMITS,
  descriptorCountProblem,
  domainSizeProblem,
  entryCountProblem,
  entrySizeProblem,
  tooDeep,
  type RequestLimits,
} from "../core/limits";
import { err, ok, type Result } from "../../shared/result";
import type { RateLimitDescriptor, RateLimitRequest, RateLimitResponse } from "../core/types";
import { unitFromNumber } from "../core/units";
import {
  RateLimitResponse_Code,
  RateLimitResponse_RateLimit_Unit,
  RateLimitRequestSchema,
  RateLimitResponseSchema,
  type RateLimitRequest as ProtoRateLimitRequest,
} from "../gen/envoy/service/ratelimit/v3/rls_pb";

// The proto3 JSON codec of /json decodes a RateLimitRequest with @bufbuild/protobuf's fromJson (JSON or original field
// names, numbers as numbers or strings, enums as names or numbers, unknown fields refused; refusals name the field by
// its path) and encodes a RateLimitResponse with its toJson (camelCase, zero values omitted, enums as names).

const MAX_EXACT_HITS = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Decodes a request message into the core's model. Enum numbers map like the /json codec's (an override unit
 * the core does not know becomes UNKNOWN, which the core refuses with its own message). The descriptor and entry
 * counts, and the bytes of the domain, keys and values, are refused with /json's messages.
 * @returns the request, or a message naming the field that cannot be represented or the limit it passes.
 */
export function requestFromProto(
  message: ProtoRateLimitRequest | CommonRequestMessage,
  limits: RequestLimits,
): Result<RateLimitRequest, string> {
  const refused =
    descriptorCountProblem(message.descriptors.length, limits) ?? domainSizeProblem(message.domain, limits);
  if (refused !== undefined) return err(refused);
  const descriptors: RateLimitDescriptor[] = [];
  for (const [index, given] of message.descriptors.entries()) {
    const refusedDescriptor =
      entryCountProblem(index, given.entries.length, limits) ??
      entrySizeProblem(index, message.domain, given.entries, limits);
    if (refusedDescriptor !== undefined) return err(refusedDescriptor);
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
        status.durationUntilResetSeconds === undefined ? undefined : durationOf(status.durationUntilResetSeconds),
    })),
    responseHeadersToAdd: response.responseHeadersToAdd.map(({ key, value }) => ({ key, value })),
    dynamicMetadata: response.dynamicMetadata,
  };
}

/**
 * A google.protobuf.Duration of non-negative seconds, kept to the millisecond (the clock's resolution): rounded first,
 * since durationFromMs turns a fractional millisecond into fractional nanos.
 */
const durationOf = (seconds: number) => durationFromMs(Math.round(seconds * 1000));

// ---- proto3 JSON (POST /json)

/**
 * The descriptor and entry counts of a /json body, checked on the parsed JSON before it is decoded, so a refused
 * request costs no more than its parse.
 */
function countProblem(body: unknown, limits: RequestLimits): string | undefined {
  if (!isJsonObject(body) || !Array.isArray(body.descriptors)) return undefined;
  const tooMany = descriptorCountProblem(body.descriptors.length, limits);
  if (tooMany !== undefined) return tooMany;
  for (const [index, descriptor] of body.descriptors.entries()) {
    if (!isJsonObject(descriptor) || !Array.isArray(descriptor.entries)) continue;
    const tooManyEntries = entryCountProblem(index, descriptor.entries.length, limits);
    if (tooManyEntries !== undefined) return tooManyEntries;
  }
  return undefined;
}

/** A JSON number's text: sign, integer part, fraction and exponent. Linear: no two parts can match the same text. */
const JSON_NUMBER_TEXT = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * The digits of a JSON number's text whose value is whole ("1e2", "100.0", "50e-1"), or undefined: left for the
 * decoder to refuse or read. Go's protojson takes a 64-bit integer given as such a string; @bufbuild/protobuf reads
 * only digits there.
 */
function wholeNumberDigits(text: string): string | undefined {
  const parts = JSON_NUMBER_TEXT.exec(text);
  if (!parts || (parts[3] === undefined && parts[4] === undefined)) return undefined;
  const [, sign, integer, fraction = "", exponent = "0"] = parts;
  const shift = Number(exponent) - fraction.length;
  // 20 digits pass 2^64 already: anything longer is out of range, which the decoder says.
  if (shift > 20) return undefined;
  const digits = integer + fraction + "0".repeat(Math.max(shift, 0));
  const kept = shift < 0 ? digits.slice(0, shift) : digits;
  if (shift < 0 && /[1-9]/.test(digits.slice(shift))) return undefined;
  return sign + (kept.replace(/^0+(?=\d)/, "") || "0");
}

/** The body with each descriptor's hits_addend (a uint64) given as a whole number's text rewritten to its digits. */
function withWholeHitsAddends(body: unknown): unknown {
  if (!isJsonObject(body) || !Array.isArray(body.descriptors)) return body;
  for (const descriptor of body.descriptors) {
    if (!isJsonObject(descriptor)) continue;
    for (const name of ["hitsAddend", "hits_addend"]) {
      const given = descriptor[name];
      const digits = typeof given === "string" ? wholeNumberDigits(given) : undefined;
      if (digits !== undefined) descriptor[name] = digits;
    }
  }
  return body;
}

/**
 * Decodes the body of a /json request (already JSON-parsed) with @bufbuild/protobuf's proto3 JSON rules, then like
 * a request message. Unlike the binary paths, an override unit number that names no unit is refused here, as an
 * unknown enum name is. `commonPath` false sends even a common body to the decoder.
 * @returns the request, or a message naming the offending field or limit.
 */
export function parseRateLimitRequestJson(
  body: unknown,
  limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
  commonPath = true,
): Result<RateLimitRequest, string> {
  const tooMany = countProblem(body, limits);
  if (tooMany !== undefined) return err(tooMany);
  const common = commonPath ? commonRequestMessage(body) : undefined;
  if (common !== undefined) return requestFromProto(common, limits);
  const decoded = decodeJson(RateLimitRequestSchema, withWholeHitsAddends(body));
  if (!decoded.ok) return decoded;
  for (const [index, descriptor] of decoded.value.descriptors.entries()) {
    const unit = descriptor.limit?.unit;
    if (unit !== undefined && unitFromNumber(unit) === undefined) {
      return err(`descriptors[${index}].limit.unit: ${unit} is not a value of enum envoy.type.v3.RateLimitUnit`);
    }
  }
  return requestFromProto(decoded.value, limits);
}

/**
 * Decodes the text of a /json body with the shared reader (its nesting checked before it is parsed), refuses a field
 * it gives twice, then decodes it.
 * @returns the request, or the message of the 400 that refuses it.
 */
export function parseRateLimitRequestText(
  text: string,
  limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
): Result<RateLimitRequest, string> {
  let body: unknown;
  try {
    body = parseJsonText(text, limits.depth.max);
  } catch (error) {
    if (error instanceof JsonTooDeep) return err(tooDeep("request body", limits.depth));
    if (error instanceof InvalidJsonBody) return err(error.message);
    throw error;
  }
  // Go's protojson refuses a field given twice; JSON.parse would keep the last, so that a proxy in front reading the
  // first and this service could see two different requests.
  const repeated = repeatedJsonKey(text);
  if (repeated !== undefined) return err(`${repeated}: given twice`);
  // A body escaping a surrogate may spell a lone one, which only the decoder refuses (as invalid UTF-8, naming the
  // field, as Go's protojson does): such bodies skip the common path, which one look at the text decides.
  return parseRateLimitRequestJson(body, limits, !escapesSurrogate(text));
}

/**
 * Encodes a response in proto3 JSON mapping, fields in proto order: zero values (0, "", UNKNOWN, empty
 * lists) are omitted, message fields are present whenever set, durations are strings like "58s".
 */
export function rateLimitResponseToJson(response: RateLimitResponse): Record<string, unknown> {
  return commonResponseJson(response) ?? protoResponseJson(response);
}

/** The protobuf encoder's proto3 JSON of a response: the definition commonResponseJson is held to. */
export function protoResponseJson(response: RateLimitResponse): Record<string, unknown> {
  return toJson(RateLimitResponseSchema, create(RateLimitResponseSchema, responseToProto(response))) as Record<
    string,
    unknown
  >;
}
