// The xDS form of a configuration: ratelimit.config.ratelimit.v3.RateLimitConfig resources in proto3 JSON, as the
// xDS client beside the Worker forwards each snapshot, read with @bufbuild/protobuf's fromJson. Each resource becomes
// the YAML file it stands for (the reference converts them the same way), so both forms go through one validation,
// with the resource's name where a file's name stands in the messages.

import { stringify } from "yaml";
import { ALGORITHMS } from "../core/algorithms";
import type { ConfigFile } from "../core/config";
import { jsonStructProblem } from "../core/config-metadata";
import { yamlV2Tags } from "../core/config-yaml-parse";
import { jsonValueTooDeep } from "../../shared/json-depth";
import { DEFAULT_CONFIG_LIMITS, tooDeep, type ConfigLimits } from "../core/limits";
import { err, ok, type Result } from "../../shared/result";
import { decodeJson } from "../proto-json";
import { unitFromNumber } from "../core/units";
import type { JsonObject } from "@bufbuild/protobuf";
import {
  RateLimitConfigSchema,
  type RateLimitDescriptor,
  type RateLimitPolicy,
} from "../gen/ratelimit/config/ratelimit/v3/rls_conf_pb";
import type { RateLimitWindow } from "../gen/edge_control_plane/ratelimit/v1/algorithm_pb";

interface YamlPolicy {
  unit: string;
  requests_per_unit: number;
  unlimited?: true;
  name?: string;
  replaces?: { name: string }[];
  algorithm?: string;
  unit_multiplier?: number;
  burst?: number;
  lease?: true;
}

/** One of `additional_limits`: a window's fields of `rate_limit`. */
type YamlWindow = Pick<YamlPolicy, "unit" | "requests_per_unit" | "algorithm" | "unit_multiplier" | "burst">;

interface YamlDescriptor {
  key: string;
  value?: string;
  rate_limit?: YamlPolicy;
  additional_limits?: YamlWindow[];
  descriptors?: YamlDescriptor[];
  shadow_mode?: true;
  detailed_metric?: true;
  quota_mode?: true;
  metadata?: JsonObject;
}

/** Thrown while a decoded resource becomes YAML; caught below and turned into the resource's error. */
class Refusal extends Error {}

function toYamlPolicy(policy: RateLimitPolicy, path: string): YamlPolicy {
  // The unit's enum name, UNKNOWN when unset: the YAML validation then says what is wrong with it.
  const unit = unitFromNumber(policy.unit);
  if (unit === undefined) {
    throw new Refusal(`${path}.unit: ${policy.unit} is not a value of enum ratelimit.config.ratelimit.v3.RateLimitUnit`);
  }
  const out: YamlPolicy = { unit, requests_per_unit: policy.requestsPerUnit };
  if (policy.unlimited) out.unlimited = true;
  if (policy.name !== "") out.name = policy.name;
  if (policy.replaces.length > 0) out.replaces = policy.replaces.map(({ name }) => ({ name }));
  const algorithm = policy.algorithm;
  if (algorithm !== undefined) {
    // ALGORITHMS lists the YAML names in the extension's enum order, so the enum number indexes it.
    const name = ALGORITHMS[algorithm.kind];
    if (name === undefined) {
      throw new Refusal(
        `${path}.algorithm.kind: ${algorithm.kind} is not a value of enum edge_control_plane.ratelimit.v1.RateLimitAlgorithm.Kind`,
      );
    }
    out.algorithm = name;
    // Absent stays absent, and an explicit 0 reaches the YAML validation, which refuses it by name.
    if (algorithm.unitMultiplier !== undefined) out.unit_multiplier = algorithm.unitMultiplier;
    if (algorithm.burst !== undefined) out.burst = algorithm.burst;
    if (algorithm.lease) out.lease = true;
  }
  return out;
}

/** The extension's `additionalLimits` as the descriptor's YAML `additional_limits` (the loader checks each). */
function toYamlWindows(windows: RateLimitWindow[], path: string): YamlWindow[] {
  return windows.map((window, index) => {
    const name = ALGORITHMS[window.kind];
    if (name === undefined) {
      throw new Refusal(
        `${path}[${index}].kind: ${window.kind} is not a value of enum edge_control_plane.ratelimit.v1.RateLimitAlgorithm.Kind`,
      );
    }
    const out: YamlWindow = { unit: window.unit, requests_per_unit: window.requestsPerUnit };
    if (name !== "fixed_window") out.algorithm = name;
    if (window.unitMultiplier !== undefined) out.unit_multiplier = window.unitMultiplier;
    if (window.burst !== undefined) out.burst = window.burst;
    return out;
  });
}

function toYamlDescriptor(descriptor: RateLimitDescriptor, path: string): YamlDescriptor {
  const out: YamlDescriptor = { key: descriptor.key };
  if (descriptor.value !== "") out.value = descriptor.value;
  if (descriptor.rateLimit !== undefined) out.rate_limit = toYamlPolicy(descriptor.rateLimit, `${path}.rateLimit`);
  const windows = descriptor.rateLimit?.algorithm?.additionalLimits ?? [];
  if (windows.length > 0) {
    out.additional_limits = toYamlWindows(windows, `${path}.rateLimit.algorithm.additionalLimits`);
  }
  const children = descriptor.descriptors.map((child, index) => toYamlDescriptor(child, `${path}.descriptors[${index}]`));
  if (children.length > 0) out.descriptors = children;
  if (descriptor.shadowMode) out.shadow_mode = true;
  if (descriptor.detailedMetric) out.detailed_metric = true;
  if (descriptor.quotaMode) out.quota_mode = true;
  if (descriptor.metadata !== undefined) {
    // Written as YAML, a lone surrogate would become an escape the YAML reader refuses; named as the YAML form's is.
    const problem = jsonStructProblem(descriptor.metadata);
    if (problem !== undefined) throw new Refusal(problem);
    out.metadata = descriptor.metadata;
  }
  return out;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

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
    // Messages name the resource by its name whenever it has one, by position otherwise.
    const given =
      isObject(resource) && typeof resource.name === "string" && resource.name !== "" ? resource.name : undefined;
    let label = given ?? `configs[${index}]`;
    try {
      if (jsonValueTooDeep(resource, limits.depth.max)) throw new Refusal(tooDeep("the config", limits.depth));
      const decoded = decodeJson(RateLimitConfigSchema, resource);
      if (!decoded.ok) throw new Refusal(decoded.error);
      const { name, domain, descriptors } = decoded.value;
      if (name === "") throw new Refusal("a RateLimitConfig needs a name");
      label = name;
      if (names.has(name)) throw new Refusal("two configs have this name");
      names.add(name);
      const root = {
        domain,
        descriptors: descriptors.map((descriptor, at) => toYamlDescriptor(descriptor, `descriptors[${at}]`)),
      };
      // Written under YAML 1.1 with the loader's tags, so values such as "1_000.0" or "0o10" come out quoted.
      files.push({ name, text: stringify(root, { version: "1.1", customTags: yamlV2Tags }) });
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      return err(`${label}: ${e.message}`);
    }
  }
  return ok(files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
}
