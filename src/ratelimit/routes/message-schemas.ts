// The OpenAPI schemas of the messages POST /json and the Connect route carry: envoy.service.ratelimit.v3's
// RateLimitRequest and RateLimitResponse in proto3 JSON, and Connect's error. Plain JSON Schema, not zod: the codecs
// read the bodies (with their own limits and messages), so register() must not validate them.
import type { OpenAPIHono } from "@hono/zod-openapi";

/** The part of JSON Schema these messages need. */
interface Schema {
  type?: "object" | "array" | "string" | "integer" | ("string" | "integer")[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: (string | number)[];
  minimum?: number;
  examples?: string[];
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export const RATE_LIMIT_REQUEST = ref("RateLimitRequest");
export const RATE_LIMIT_RESPONSE = ref("RateLimitResponse");
export const CONNECT_ERROR = ref("ConnectError");

const UNITS = ["UNKNOWN", "SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR", "WEEK"];
/** proto3 JSON writes 64-bit integers as strings and reads either form. */
const uint64: Schema = { type: ["integer", "string"], description: "a uint64: a number or a decimal string" };

const schemas: Record<string, Schema> = {
  RateLimitRequest: {
    type: "object",
    description:
      "envoy.service.ratelimit.v3.RateLimitRequest in proto3 JSON: lowerCamelCase or the .proto's field names; " +
      "unknown fields are refused",
    properties: {
      domain: { type: "string" },
      descriptors: {
        type: "array",
        items: {
          type: "object",
          description: "envoy.extensions.common.ratelimit.v3.RateLimitDescriptor",
          properties: {
            entries: {
              type: "array",
              items: {
                type: "object",
                properties: { key: { type: "string" }, value: { type: "string" } },
              },
            },
            limit: {
              type: "object",
              description: "an override of the configured limit",
              properties: {
                requestsPerUnit: { type: "integer", minimum: 0 },
                unit: { type: ["string", "integer"], enum: [...UNITS, 0, 1, 2, 3, 4, 5, 6, 7] },
              },
            },
            hitsAddend: uint64,
          },
        },
      },
      hitsAddend: { type: "integer", minimum: 0, description: "how many hits the request counts (default 1)" },
    },
  },
  RateLimitResponse: {
    type: "object",
    description: "envoy.service.ratelimit.v3.RateLimitResponse in proto3 JSON (zero values left out)",
    properties: {
      overallCode: { type: "string", enum: ["UNKNOWN", "OK", "OVER_LIMIT"] },
      statuses: {
        type: "array",
        description: "one per descriptor, in the request's order",
        items: {
          type: "object",
          properties: {
            code: { type: "string", enum: ["UNKNOWN", "OK", "OVER_LIMIT"] },
            currentLimit: {
              type: "object",
              properties: {
                name: { type: "string" },
                requestsPerUnit: { type: "integer" },
                unit: { type: "string", enum: UNITS },
              },
            },
            limitRemaining: { type: "integer" },
            durationUntilReset: {
              type: "string",
              description:
                'a google.protobuf.Duration, e.g. "42s"; a sliding window or token bucket may give a fraction ("0.100s")',
            },
          },
        },
      },
      responseHeadersToAdd: {
        type: "array",
        items: { type: "object", properties: { key: { type: "string" }, value: { type: "string" } } },
      },
      dynamicMetadata: {
        type: "object",
        description:
          "With RESPONSE_DYNAMIC_METADATA (a google.protobuf.Struct): `domain`, `descriptors` (`entries` as " +
          "`key=value`, `limit` override, `hitsAddend`), the request's `hitsAddend`, and the merged `metadata` of the " +
          "rules whose descriptors passed",
      },
    },
  },
  ConnectError: {
    type: "object",
    description: "The Connect protocol's error body; the HTTP status follows from the code",
    properties: {
      code: {
        type: "string",
        examples: ["invalid_argument", "resource_exhausted", "unknown", "internal", "deadline_exceeded"],
      },
      message: { type: "string" },
    },
    required: ["code"],
  },
};

/** Adds the message schemas to the app's OpenAPI components (copied into the root document). */
export function registerMessageSchemas(app: OpenAPIHono<{ Bindings: Env }>): void {
  for (const [name, schema] of Object.entries(schemas)) app.openAPIRegistry.registerComponent("schemas", name, schema);
}
