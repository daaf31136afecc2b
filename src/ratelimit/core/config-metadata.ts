// A descriptor's `metadata` map as a protobuf Struct holds it, refused as the reference refuses what
// structpb.NewStruct cannot hold: a string (a key or a value) that is not UTF-8, such as a `!!binary` one.
import type { YNode } from "./config-yaml-parse";
import { goFloat, goQuote, isUtf8, utf8Bytes } from "./go-format";
import type { StructObject, StructValue } from "./types";

export class MetadataFailure extends Error {}

type Scalar = Extract<YNode, { kind: "scalar" }>;
type YamlMap = Extract<YNode, { kind: "map" }>;

/** A string a Struct can hold, as structpb checks it: valid UTF-8, else its message quoting the bytes. */
function structText(text: string, bytes: Uint8Array = utf8Bytes(text)): string {
  if (!isUtf8(bytes)) throw new MetadataFailure(`proto: invalid UTF-8 in string: ${goQuote(bytes)}`);
  return text;
}

/** A key of the metadata map itself, which yaml.v2 decodes into a string: a scalar's source text, or its bytes. */
function topKey(key: Scalar): string {
  if (key.tag === "binary") return structText(String(key.value), key.bytes);
  return structText(key.tag === "null" ? "" : key.text);
}

/** A key of a map inside: the reference turns each decoded key into its `%v` text (`yes` is `true`, `~` `<nil>`). */
function innerKey(key: Scalar): string {
  switch (key.tag) {
    case "binary":
      return structText(String(key.value), key.bytes);
    case "null":
      return "<nil>";
    case "float":
      return goFloat(key.value as number);
    default:
      return structText(String(key.value));
  }
}

/** A map's entries under their keys; fromEntries defines own properties, so `__proto__` stays a key. */
function structOf(node: YamlMap, keyOf: (key: Scalar) => string): StructObject {
  // The YAML reader refuses a list or a map as a key before any metadata is read.
  const entries = node.pairs.map(({ key, value }): [string, StructValue] => [
    keyOf(key as Scalar),
    metadataValue(value),
  ]);
  // A repeated key's last value wins, as in yaml.v2's map.
  return Object.fromEntries(entries);
}

/** One metadata value as a Struct value: scalars as themselves (any number, infinite ones too), lists, maps. */
function metadataValue(node: YNode): StructValue {
  switch (node.kind) {
    case "scalar":
      if (node.tag === "str") return structText(String(node.value));
      if (node.tag === "binary") return structText(String(node.value), node.bytes);
      if (node.tag === "null") return null;
      return node.value as number | boolean;
    case "seq":
      return node.items.map(metadataValue);
    case "map":
      return structOf(node, innerKey);
  }
}

/** The metadata map of a descriptor as a Struct; throws MetadataFailure with structpb's message. */
export function metadataStruct(node: YamlMap): StructObject {
  return structOf(node, topKey);
}

/**
 * Why metadata that arrived as JSON (an xDS resource's Struct) cannot be a Struct, in structpb's words: a key or a
 * string holding a lone surrogate, which JSON can carry and UTF-8 cannot. undefined when it can.
 */
export function jsonStructProblem(value: unknown): string | undefined {
  try {
    jsonStructCheck(value);
    return undefined;
  } catch (e) {
    if (!(e instanceof MetadataFailure)) throw e;
    return `error parsing metadata: ${e.message}`;
  }
}

function jsonStructCheck(value: unknown): void {
  if (typeof value === "string") structText(value);
  else if (Array.isArray(value)) value.forEach(jsonStructCheck);
  else if (typeof value === "object" && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      structText(key);
      jsonStructCheck(inner);
    }
  }
}
