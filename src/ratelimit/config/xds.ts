// The xDS form of a configuration: ratelimit.config.ratelimit.v3.RateLimitConfig resources in proto3 JSON, as the
// xDS client beside the Worker forwards each snapshot. Each resource becomes the YAML file it stands for (the
// reference converts them the same way), so both forms go through one validation, with the resource's name where
// a file's name stands in the messages.

import { stringify } from "yaml";
import type { ConfigFile } from "../core/config";
import { DEFAULT_CONFIG_LIMITS, jsonValueTooDeep, tooDeep, type ConfigLimits } from "../core/limits";
import { err, ok, type Result } from "../core/result";
import {
  isObject,
  JsonFailure,
  parseBool,
  parseList,
  parseString,
  parseUint32,
  parseUnit,
  readFields,
} from "../core/proto-json";

interface YamlPolicy {
  unit: string;
  requests_per_unit: number;
  unlimited?: true;
  name?: string;
  replaces?: { name: string }[];
}

interface YamlDescriptor {
  key: string;
  value?: string;
  rate_limit?: YamlPolicy;
  descriptors?: YamlDescriptor[];
  shadow_mode?: true;
  detailed_metric?: true;
}

function parseReplace(value: unknown): { name: string } {
  const fields = readFields(value, "RateLimitReplace", ["name"]);
  return { name: parseString(fields.get("name"), "name", "RateLimitReplace") };
}

function parsePolicy(value: unknown): YamlPolicy {
  const message = "RateLimitPolicy";
  const fields = readFields(value, message, ["unit", "requestsPerUnit", "unlimited", "name", "replaces"]);
  // The unit's enum name, UNKNOWN when unset: the YAML validation then says what is wrong with it.
  const policy: YamlPolicy = {
    unit: parseUnit(fields.get("unit"), "unit", message),
    requests_per_unit: parseUint32(fields.get("requestsPerUnit"), "requestsPerUnit", message),
  };
  if (parseBool(fields.get("unlimited"), "unlimited", message)) policy.unlimited = true;
  const name = parseString(fields.get("name"), "name", message);
  if (name !== "") policy.name = name;
  const replaces = parseList(fields.get("replaces"), "replaces", message, parseReplace);
  if (replaces.length > 0) policy.replaces = replaces;
  return policy;
}

function parseDescriptor(value: unknown): YamlDescriptor {
  const message = "RateLimitDescriptor";
  const fields = readFields(value, message, [
    "key",
    "value",
    "rateLimit",
    "descriptors",
    "shadowMode",
    "detailedMetric",
    "quotaMode",
  ]);
  const descriptor: YamlDescriptor = { key: parseString(fields.get("key"), "key", message) };
  const text = parseString(fields.get("value"), "value", message);
  if (text !== "") descriptor.value = text;
  const policy = fields.get("rateLimit");
  if (policy !== null && policy !== undefined) descriptor.rate_limit = parsePolicy(policy);
  const children = parseList(fields.get("descriptors"), "descriptors", message, parseDescriptor);
  if (children.length > 0) descriptor.descriptors = children;
  if (parseBool(fields.get("shadowMode"), "shadowMode", message)) descriptor.shadow_mode = true;
  if (parseBool(fields.get("detailedMetric"), "detailedMetric", message)) descriptor.detailed_metric = true;
  if (parseBool(fields.get("quotaMode"), "quotaMode", message)) {
    throw new JsonFailure(`descriptor '${descriptor.key}': quota_mode is not supported by this service`);
  }
  return descriptor;
}

/**
 * Turns the resources of one xDS snapshot into the YAML files they stand for, in name order (the order the files
 * form loads in, so every isolate builds the same config). A resource nested deeper than the limit is refused before
 * it is read (reading recurses per level); one within it becomes YAML no deeper than itself.
 * @returns the files, or a message naming the resource (by name, else by position) and the problem.
 */
export function xdsConfigsToFiles(
  resources: unknown[],
  limits: Pick<ConfigLimits, "depth"> = DEFAULT_CONFIG_LIMITS,
): Result<ConfigFile[], string> {
  const files: ConfigFile[] = [];
  const names = new Set<string>();
  for (const [index, resource] of resources.entries()) {
    const message = "RateLimitConfig";
    // Messages name the resource by its name whenever it has one, by position otherwise.
    const given =
      isObject(resource) && typeof resource.name === "string" && resource.name !== "" ? resource.name : undefined;
    let label = given ?? `configs[${index}]`;
    try {
      if (jsonValueTooDeep(resource, limits.depth.max)) throw new JsonFailure(tooDeep("the config", limits.depth));
      const fields = readFields(resource, message, ["name", "domain", "descriptors"]);
      const name = parseString(fields.get("name"), "name", message);
      if (name === "") throw new JsonFailure("a RateLimitConfig needs a name");
      label = name;
      if (names.has(name)) throw new JsonFailure("two configs have this name");
      names.add(name);
      const root = {
        domain: parseString(fields.get("domain"), "domain", message),
        descriptors: parseList(fields.get("descriptors"), "descriptors", message, parseDescriptor),
      };
      // Written under YAML 1.1, the version the loader reads, so values such as "1_000.0" come out quoted.
      files.push({ name, text: stringify(root, { version: "1.1" }) });
    } catch (e) {
      if (!(e instanceof JsonFailure)) throw e;
      return err(`${label}: ${e.message}`);
    }
  }
  return ok(files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
}
