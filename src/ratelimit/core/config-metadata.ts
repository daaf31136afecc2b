// A descriptor's `metadata` map as a protobuf Struct holds it, refused as structpb.NewStruct refuses what it cannot hold.
import { goFormat, type YNode } from "./config-yaml-parse";
import type { StructValue } from "./types";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A string a Struct can hold: protobuf strings are valid UTF-8, so a lone surrogate (from an escape) is refused. */
function metadataText(text: string): string {
  if (LONE_SURROGATE.test(text)) throw new MetadataFailure(`proto: invalid UTF-8 in string: ${JSON.stringify(text)}`);
  return text;
}

export class MetadataFailure extends Error {}

/** One metadata value as a Struct value: scalars as themselves, lists and maps converted inside. */
export function metadataValue(node: YNode): StructValue {
  switch (node.kind) {
    case "scalar":
      if (node.tag === "str") return metadataText(String(node.value));
      if (node.tag === "null") return null;
      if (typeof node.value === "number" && !Number.isFinite(node.value)) {
        throw new MetadataFailure(`proto: invalid number: ${node.text}`);
      }
      return node.value as number | boolean;
    case "seq":
      return node.items.map(metadataValue);
    case "map": {
      // fromEntries defines own properties, so a key such as `__proto__` stays a key; a repeated key's last value wins.
      const entries = node.pairs.map(({ key, value }): [string, StructValue] => {
        // yaml.v2 puts the text of a scalar key into a string key; a collection cannot be one.
        if (key.kind !== "scalar") throw new MetadataFailure(`proto: invalid key: ${goFormat(key)}`);
        return [metadataText(key.text), metadataValue(value)];
      });
      return Object.fromEntries(entries);
    }
  }
}
