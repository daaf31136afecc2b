// The .proto files of proto/ loaded at run time for the Node programs (the Worker uses generated code instead).
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import path from "node:path";

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
