// RateLimitConfig resources in proto3 JSON (the xDS form), shared by the Worker's xDS tests and the gateway's.

type Json = null | string | number | boolean | Json[] | { [key: string]: Json };

/** google.protobuf.Struct in proto3 JSON holding this object, as a management server sends descriptor metadata. */
export function structOf(json: { [key: string]: Json }): { fields: Record<string, unknown> } {
  return { fields: Object.fromEntries(Object.entries(json).map(([key, value]) => [key, valueOf(value)])) };
}

function valueOf(value: Json): Record<string, unknown> {
  if (value === null) return { nullValue: "NULL_VALUE" };
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "number") return { numberValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map(valueOf) } };
  return { structValue: structOf(value) };
}

/**
 * The "shop" configuration: a named limit that replaces another, in shadow mode with a detailed metric; a nested
 * limit; an unlimited key. `hourly` is the nested limit's int64, which proto3 JSON may write as a string.
 */
export function shopConfig(hourly: number | string) {
  return {
    name: "shop-config",
    domain: "shop",
    descriptors: [
      {
        key: "path",
        value: "/login",
        rateLimit: { unit: "MINUTE", requestsPerUnit: 5, name: "login", replaces: [{ name: "base" }] },
        shadowMode: true,
        detailedMetric: true,
      },
      {
        key: "user",
        descriptors: [{ key: "plan", value: "free", rateLimit: { unit: "HOUR", requestsPerUnit: hourly } }],
      },
      { key: "internal", rateLimit: { unlimited: true } },
    ],
  };
}
