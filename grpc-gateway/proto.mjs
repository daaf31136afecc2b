// The .proto files of proto/ loaded at run time for the Node programs (the Worker uses generated code instead), and
// google.protobuf.Struct as decoded messages hold it turned into its proto3 JSON form.
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import path from "node:path";
import protobuf from "protobufjs";

export const PROTO_ROOT = path.join(import.meta.dirname, "..", "proto");

/**
 * Loads one .proto file (a path under proto/) with proto3 JSON-like conventions: camelCase fields, enums as
 * names, 64-bit integers as strings, unset fields left out.
 * @param {string} file
 * @returns {any} the package tree of grpc.loadPackageDefinition
 */
export function loadProto(file) {
  const options = { includeDirs: [PROTO_ROOT], enums: String, longs: String, defaults: false };
  const definition = protoLoader.loadSync(file, options);
  return grpc.loadPackageDefinition(definition);
}

/**
 * Loads one message type of a .proto file (a path under proto/) with protobufjs, for encoding and decoding it alone.
 * Imports resolve from proto/, as protoc's include path does (Struct and the other well-known types are built in).
 * @param {string} file
 * @param {string} name the type's fully qualified name
 * @returns {protobuf.Type}
 */
export function loadProtoType(file, name) {
  const root = new protobuf.Root();
  root.resolvePath = (/** @type {string} */ _origin, /** @type {string} */ target) =>
    path.isAbsolute(target) ? target : path.join(PROTO_ROOT, target);
  return root.loadSync(file).lookupType(name);
}

/**
 * A google.protobuf.Value as a decoded message holds it ({stringValue: ...}), in its proto3 JSON form.
 * @param {any} value
 * @returns {unknown}
 */
function valueToJson(value) {
  if (value === null || value === undefined) return null;
  if ("structValue" in value) return structToJson(value.structValue);
  if ("listValue" in value) return (value.listValue.values ?? []).map(valueToJson);
  if ("stringValue" in value) return value.stringValue;
  if ("numberValue" in value) return value.numberValue;
  if ("boolValue" in value) return value.boolValue;
  return null;
}

/**
 * A google.protobuf.Struct as a decoded message holds it ({fields: {...}}), as the plain object proto3 JSON makes of
 * it.
 * @param {any} struct
 * @returns {Record<string, unknown>}
 */
export function structToJson(struct) {
  return Object.fromEntries(Object.entries(struct?.fields ?? {}).map(([key, value]) => [key, valueToJson(value)]));
}
