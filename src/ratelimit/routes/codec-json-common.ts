// The common shapes of POST /json read and written without protobuf reflection: a request of a domain and descriptors
// of key/value entries only, and a response without dynamic metadata. On a hot key the reflection codec was a measured
// 5 % of a decision's CPU. Anything else goes through codec.ts, which stays the definition: a property test holds both
// to the same result, byte for byte.
import type { Code, DescriptorStatus, HeaderValue, RateLimit, RateLimitResponse, Unit } from "../core/types";

/** A request message as the protobuf decoder gives it, for the fields a common request may hold. */
export interface CommonRequestMessage {
  domain: string;
  descriptors: { entries: { key: string; value: string }[]; limit?: undefined; hitsAddend?: undefined }[];
  hitsAddend: number;
}

/** A JSON object as JSON.parse makes it: neither an array nor null (its prototype is Object's). */
export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const protoString = (value: unknown): value is string => typeof value === "string";

/** The entry `{"key": "...", "value": "..."}` with no other field; undefined for any other value. */
function commonEntry(value: unknown): { key: string; value: string } | undefined {
  if (!isJsonObject(value)) return undefined;
  let fields = 0;
  for (const name in value) {
    if (name !== "key" && name !== "value") return undefined;
    fields++;
  }
  const { key, value: entryValue } = value;
  return fields === 2 && protoString(key) && protoString(entryValue) ? { key, value: entryValue } : undefined;
}

/** The descriptor `{"entries": [...]}` of common entries; undefined for any other value. */
function commonDescriptor(value: unknown): CommonRequestMessage["descriptors"][number] | undefined {
  if (!isJsonObject(value)) return undefined;
  for (const name in value) if (name !== "entries") return undefined;
  if (!Array.isArray(value.entries)) return undefined;
  const entries: { key: string; value: string }[] = [];
  for (const item of value.entries) {
    const entry = commonEntry(item);
    if (entry === undefined) return undefined;
    entries.push(entry);
  }
  return { entries };
}

/**
 * The message the protobuf decoder would make of a parsed /json body of the common shape: an object with a string
 * `domain` and a `descriptors` list of `{"entries": [{"key", "value"}]}`, with no other field anywhere. Undefined for
 * any other body, which the decoder reads (and refuses) itself.
 */
export function commonRequestMessage(body: unknown): CommonRequestMessage | undefined {
  if (!isJsonObject(body)) return undefined;
  for (const name in body) if (name !== "domain" && name !== "descriptors") return undefined;
  const { domain, descriptors } = body;
  if (!protoString(domain) || !Array.isArray(descriptors)) return undefined;
  const decoded: CommonRequestMessage["descriptors"] = [];
  for (const item of descriptors) {
    const descriptor = commonDescriptor(item);
    if (descriptor === undefined) return undefined;
    decoded.push(descriptor);
  }
  return { domain, descriptors: decoded, hitsAddend: 0 };
}

/** A Duration of non-negative seconds in proto3 JSON, to the millisecond as codec.ts rounds it ("58s", "0.250s"). */
function durationJson(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  const whole = Math.floor(ms / 1000);
  const millis = ms - whole * 1000;
  return millis === 0 ? `${whole}s` : `${whole}.${String(millis).padStart(3, "0")}s`;
}

/** An enum value in proto3 JSON: its name, left out when it is the zero value. */
const enumJson = <T extends Code | Unit>(value: T) => (value === "UNKNOWN" ? undefined : value);

function rateLimitJson(limit: RateLimit): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  if (limit.requestsPerUnit !== 0) json.requestsPerUnit = limit.requestsPerUnit;
  const unit = enumJson(limit.unit);
  if (unit !== undefined) json.unit = unit;
  if (limit.name) json.name = limit.name;
  return json;
}

function statusJson(status: DescriptorStatus): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  const code = enumJson(status.code);
  if (code !== undefined) json.code = code;
  if (status.currentLimit) json.currentLimit = rateLimitJson(status.currentLimit);
  if (status.limitRemaining !== 0) json.limitRemaining = status.limitRemaining;
  if (status.durationUntilResetSeconds !== undefined)
    json.durationUntilReset = durationJson(status.durationUntilResetSeconds);
  return json;
}

function headerJson({ key, value }: HeaderValue): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  if (key !== "") json.key = key;
  if (value !== "") json.value = value;
  return json;
}

/**
 * A response without dynamic metadata in proto3 JSON, as codec.ts's protobuf encoder writes it: fields in the order of
 * their numbers in rls.proto (a RateLimit's `name`, number 3, last), zero values left out. Undefined for a response
 * with dynamic metadata (the encoder's own).
 */
export function commonResponseJson(response: RateLimitResponse): Record<string, unknown> | undefined {
  if (response.dynamicMetadata !== undefined) return undefined;
  const json: Record<string, unknown> = {};
  const overall = enumJson(response.overallCode);
  if (overall !== undefined) json.overallCode = overall;
  if (response.statuses.length > 0) json.statuses = response.statuses.map(statusJson);
  if (response.responseHeadersToAdd.length > 0)
    json.responseHeadersToAdd = response.responseHeadersToAdd.map(headerJson);
  return json;
}
