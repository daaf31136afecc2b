// Shared test helpers for the core: fixture loading, request builders and a ready-made service setup.

import { readFileSync } from "node:fs";
import path from "node:path";
import { loadConfig, type RateLimitConfig } from "../../src/ratelimit/core/config";
import type { LocalCache } from "../../src/ratelimit/core/local-cache";
import { type Decision, type ServiceSettings, shouldRateLimit } from "../../src/ratelimit/core/service";
import type { RateLimitDescriptor, RateLimitRequest } from "../../src/ratelimit/core/types";
import { MemoryStore } from "./ratelimit-memory-store";

const FIXTURES = path.join(import.meta.dirname, "..", "ratelimit", "core", "fixtures");

export function fixture(name: string): { name: string; text: string } {
  return { name, text: readFileSync(path.join(FIXTURES, name), "utf8") };
}

/** Loads fixtures that must be valid; fails the test with the loader's message otherwise. */
export function loadFixtures(names: string[], mergeDomainConfig = false): RateLimitConfig {
  const result = loadConfig(names.map(fixture), { mergeDomainConfig });
  if (!result.ok) throw new Error(`fixture load failed: ${result.error.message}`);
  return result.value;
}

/** The message a set of fixtures is rejected with (fails the test when they load). */
export function loadError(names: string[], mergeDomainConfig = false): string {
  const result = loadConfig(names.map(fixture), { mergeDomainConfig });
  if (result.ok) throw new Error(`expected ${names.join(", ")} to be rejected`);
  return result.error.message;
}

/** A descriptor from `[key, value]` pairs. */
export function descriptor(...entries: [string, string][]): RateLimitDescriptor {
  return { entries: entries.map(([key, value]) => ({ key, value })) };
}

/** A request in the style of the reference's test helper: one descriptor per list of pairs. */
export function request(domain: string, descriptors: [string, string][][], hitsAddend = 0): RateLimitRequest {
  return { domain, descriptors: descriptors.map((pairs) => descriptor(...pairs)), hitsAddend };
}

export const DEFAULT_SETTINGS: ServiceSettings = {
  shadowMode: false,
  stopCacheKeyIncrementWhenOverlimit: false,
  nearLimitRatio: 0.8,
  cacheKeyPrefix: "",
};

export interface Harness {
  store: MemoryStore;
  /** Runs one request; fails the test on a ServiceError. */
  run(req: RateLimitRequest, now?: number): Promise<Decision>;
}

/** A service over a fresh MemoryStore with the given config and settings. */
export function harness(
  config: RateLimitConfig | undefined,
  settings: Partial<ServiceSettings> = {},
  localCache?: LocalCache,
): Harness {
  const store = new MemoryStore();
  const deps = { config, store, settings: { ...DEFAULT_SETTINGS, ...settings }, localCache };
  return {
    store,
    async run(req, now = 1234) {
      const result = await shouldRateLimit(deps, req, now);
      if (!result.ok) throw new Error(`unexpected service error: ${result.error.message}`);
      return result.value;
    },
  };
}

/** Loads one YAML text that must be valid. */
export function loadConfigText(text: string): RateLimitConfig {
  const result = loadConfig([{ name: "inline.yaml", text }], { mergeDomainConfig: false });
  if (!result.ok) throw new Error(`config load failed: ${result.error.message}`);
  return result.value;
}
