// Readers of proto3 JSON shared by the decoders of /json (RateLimitRequest) and of the xDS form of a configuration
// (RateLimitConfig): protojson's rules, i.e. JSON or original field names, numbers as numbers or decimal strings,
// enums as names or numbers, unknown and duplicate fields refused, null meaning unset.

import type { Unit } from "./types";
import { UNIT_NAMES, unitFromNumber } from "./units";

const MAX_UINT32 = 4294967295;

/** Thrown by the readers below; each decoder catches it and turns it into an error value. */
export class JsonFailure extends Error {}

export type JsonObject = Record<string, unknown>;

export function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The original (snake_case) proto name of a JSON (camelCase) field name. */
const originalName = (jsonName: string) => jsonName.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * Reads the fields of one message, given by their JSON names; each is also accepted under its original proto name
 * (hitsAddend or hits_addend). A field given under both names, or a name not listed, is refused. The map is keyed
 * by JSON name.
 */
export function readFields(value: unknown, message: string, jsonNames: readonly string[]): Map<string, unknown> {
  if (!isObject(value)) throw new JsonFailure(`${message} must be a JSON object, got ${show(value)}`);
  const accepted = new Map<string, string>();
  for (const jsonName of jsonNames) {
    accepted.set(jsonName, jsonName);
    accepted.set(originalName(jsonName), jsonName);
  }
  const out = new Map<string, unknown>();
  for (const [name, fieldValue] of Object.entries(value)) {
    const jsonName = accepted.get(name);
    if (jsonName === undefined) throw new JsonFailure(`unknown field "${name}" in ${message}`);
    if (out.has(jsonName)) throw new JsonFailure(`duplicate field "${jsonName}" in ${message}`);
    out.set(jsonName, fieldValue);
  }
  return out;
}

export function where(field: string, message: string): string {
  return `field "${field}" in ${message}`;
}

export function parseString(value: unknown, field: string, message: string): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  throw new JsonFailure(`invalid value for string ${where(field, message)}: ${show(value)}`);
}

export function parseBool(value: unknown, field: string, message: string): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === "boolean") return value;
  throw new JsonFailure(`invalid value for bool ${where(field, message)}: ${show(value)}`);
}

/** An unsigned integer given as a JSON number or a decimal string, at most `max`. */
export function parseUnsigned(value: unknown, type: string, max: number, field: string, message: string): number {
  let n: number | undefined;
  if (typeof value === "number" && Number.isInteger(value)) n = value;
  else if (typeof value === "string" && /^\d+$/.test(value)) n = Number(value);
  if (n === undefined || n < 0 || n > max) {
    throw new JsonFailure(`invalid value for ${type} ${where(field, message)}: ${show(value)}`);
  }
  return n;
}

export function parseUint32(value: unknown, field: string, message: string): number {
  if (value === null || value === undefined) return 0;
  return parseUnsigned(value, "uint32", MAX_UINT32, field, message);
}

/** google.protobuf.UInt64Value: null means "not set". Values past 2^53 cannot be held exactly: refused. */
export function parseUint64Wrapper(value: unknown, field: string, message: string): number | undefined {
  if (value === null || value === undefined) return undefined;
  return parseUnsigned(value, "uint64", Number.MAX_SAFE_INTEGER, field, message);
}

export function parseUnit(value: unknown, field: string, message: string): Unit {
  if (value === null || value === undefined) return "UNKNOWN";
  if (typeof value === "string" && (UNIT_NAMES as readonly string[]).includes(value)) return value as Unit;
  const byNumber = typeof value === "number" ? unitFromNumber(value) : undefined;
  if (byNumber !== undefined) return byNumber;
  throw new JsonFailure(`invalid value for enum ${where(field, message)}: ${show(value)}`);
}

export function parseList<T>(
  value: unknown,
  field: string,
  message: string,
  item: (value: unknown, index: number) => T,
): T[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new JsonFailure(`invalid value for repeated ${where(field, message)}: ${show(value)}`);
  }
  return value.map((element, index) => item(element, index));
}
