// proto3 JSON decoding through @bufbuild/protobuf's fromJson, with refusals that name the offending field by its
// path (`descriptors[0].entries[1].key: ...`): the library decides what is valid, but its errors name only the
// message type, which tells a client nothing about where in its body the problem is.

import { err, ok, type Result } from "../shared/result";
import { fromJson, type DescField, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";

export type Decoded<T> = Result<T, string>;

type JsonObject = Record<string, JsonValue>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const show = (value: unknown): string => JSON.stringify(value) ?? String(value);

const join = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`);

/** The library's message without its "cannot decode field x.y.Z.f from JSON: " preamble. */
function detail(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const enumValue = /^cannot decode enum (\S+) from JSON: (.*)$/s.exec(text);
  if (enumValue) return `${enumValue[2]} is not a value of enum ${enumValue[1]}`;
  return text.replace(/^cannot decode (?:field|message) \S+ from JSON: /, "");
}

/** The message type whose JSON the value of `field` holds (a message field, or a list or map of messages). */
function messageOf(field: DescField): DescMessage | undefined {
  if (field.fieldKind === "message") return field.message;
  if (field.fieldKind === "list" && field.listKind === "message") return field.message;
  if (field.fieldKind === "map" && field.mapKind === "message") return field.message;
  return undefined;
}

/**
 * Finds where `json`, which fromJson refused as a `desc`, goes wrong: the first field that is refused on its own,
 * descending into messages, list items and map values, so the message names the innermost part at fault.
 */
function locate(desc: DescMessage, json: JsonValue, path: string, error: unknown): string {
  // Well-known types (wrappers, Duration, ...) have their own JSON forms: the library's word is the best there.
  if (desc.typeName.startsWith("google.protobuf.")) return `${path || desc.name}: ${detail(error)}`;
  if (!isObject(json)) return `${path || desc.name} must be a JSON object, got ${show(json)}`;
  const seen = new Map<DescField, string>();
  for (const [key, value] of Object.entries(json)) {
    const field = desc.fields.find((f) => f.jsonName === key || f.name === key);
    if (field === undefined) return `${join(path, key)}: unknown field`;
    const twice = seen.get(field);
    if (twice !== undefined) return `${join(path, field.jsonName)}: given twice (as ${twice} and ${key})`;
    seen.set(field, key);
    try {
      fromJson(desc, { [key]: value });
      continue;
    } catch (e) {
      const at = join(path, key);
      const inner = messageOf(field);
      if (inner !== undefined && value !== null) {
        if (field.fieldKind === "message") return locate(inner, value, at, e);
        const items: [string, JsonValue][] =
          field.fieldKind === "list" && Array.isArray(value)
            ? value.map((item, index) => [`${at}[${index}]`, item])
            : field.fieldKind === "map" && isObject(value)
              ? Object.entries(value).map(([name, item]) => [`${at}[${JSON.stringify(name)}]`, item])
              : [];
        for (const [itemPath, item] of items) {
          if (item === null) return `${itemPath} must be a JSON object, got null`;
          try {
            fromJson(inner, item);
          } catch (itemError) {
            return locate(inner, item, itemPath, itemError);
          }
        }
      }
      return `${at}: ${detail(e)}`;
    }
  }
  return `${path || desc.name}: ${detail(error)}`;
}

/**
 * Decodes proto3 JSON as `schema` (JSON or original field names, numbers as numbers or strings, enums as names or
 * numbers, null meaning unset; unknown fields, and a field under both its names, refused). A name its text repeats is
 * gone once parsed: the text's reader refuses it first (repeatedJsonKey).
 * @returns the message, or a refusal naming the field at fault by its path in `json`.
 */
export function decodeJson<Desc extends DescMessage>(schema: Desc, json: unknown): Decoded<MessageShape<Desc>> {
  try {
    return ok(fromJson(schema, json as JsonValue));
  } catch (error) {
    return err(locate(schema, json as JsonValue, "", error));
  }
}
