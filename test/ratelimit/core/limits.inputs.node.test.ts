// Property tests of the rate limit service's parsers (plain Node): the YAML config loader, the xDS (JSON) config loader
// and the /json request decoder answer a value or their typed error on any input, never throw, and refuse exactly
// what passes their limits (alias expansion, nesting, sizes, counts) with our messages.
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { Composer, Parser } from "yaml";
import { loadConfig, type ConfigFile } from "../../../src/ratelimit/core/config";
import { create } from "@bufbuild/protobuf";
import { RateLimitRequestSchema } from "../../../src/ratelimit/gen/envoy/service/ratelimit/v3/rls_pb";
import { parseRateLimitRequestText, requestFromProto } from "../../../src/ratelimit/routes/codec";
import {
  DEFAULT_CONFIG_LIMITS,
  DEFAULT_REQUEST_LIMITS,
  utf8Length,
  type ConfigLimits,
} from "../../../src/ratelimit/core/limits";
import { xdsConfigsToFiles } from "../../../src/ratelimit/config/xds";
import { jsonTextTooDeep, jsonValueTooDeep } from "../../../src/shared/json-depth";

/** Calls `run`, answering its value or what it threw: the properties require the former. */
function outcome<T>(run: () => T): { value: T } | { thrown: unknown } {
  try {
    return { value: run() };
  } catch (thrown) {
    return { thrown };
  }
}

const limits = (changes: Partial<Record<keyof ConfigLimits, number>> = {}): ConfigLimits => ({
  fileBytes: { ...DEFAULT_CONFIG_LIMITS.fileBytes, max: changes.fileBytes ?? DEFAULT_CONFIG_LIMITS.fileBytes.max },
  aliasNodes: { ...DEFAULT_CONFIG_LIMITS.aliasNodes, max: changes.aliasNodes ?? DEFAULT_CONFIG_LIMITS.aliasNodes.max },
  depth: { ...DEFAULT_CONFIG_LIMITS.depth, max: changes.depth ?? DEFAULT_CONFIG_LIMITS.depth.max },
});

/** Loads files, requiring a value: the config, or a ConfigError naming one of the files. */
function load(files: ConfigFile[], configLimits = limits()) {
  const result = outcome(() => loadConfig(files, { mergeDomainConfig: false, limits: configLimits }));
  if ("thrown" in result) throw new Error(`loadConfig threw ${String(result.thrown)}`);
  const loaded = result.value;
  if (!loaded.ok) {
    expect(files.map((file) => file.name)).toContain(loaded.error.file);
    expect(loaded.error.message.startsWith(`${loaded.error.file}: `)).toBe(true);
  }
  return loaded;
}

const tooDeepTail = (max: number) =>
  `is nested deeper than ${max} levels (the limit set by RATELIMIT_MAX_NESTING_DEPTH)`;
const depthMessage = (file: string, max = 100) => `${file}: the YAML ${tooDeepTail(max)}`;
const aliasMessage = (file: string, max: number) =>
  `${file}: aliases expand to more than ${max} nodes in this set of files ` +
  "(the limit set by RATELIMIT_CONFIG_MAX_ALIAS_NODES)";

/** YAML-ish text from the pieces that matter to the parser: indentation, flow, anchors, aliases, tags, documents. */
const yamlText = fc
  .array(
    fc.oneof(
      fc.constantFrom("domain: d", "descriptors:", "- key: k", "value: v", "rate_limit:", "unit: second"),
      fc.constantFrom("requests_per_unit: 5", "unlimited: true", "replaces:", "- name: n", "shadow_mode: yes"),
      fc.constantFrom("&a ", "&b ", "*a", "*b", "<<: *a", "!!str ", "? ", ": ", "- "),
      fc.constantFrom("[", "]", "{", "}", ",", "'", '"'),
      fc.constantFrom("\n", "\n  ", "\n    ", "\n      ", "---\n", "...\n", "# c", "%YAML 1.1\n", "\t", "\\"),
      fc.string({ maxLength: 4 }),
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(""));

describe("the YAML config loader", () => {
  it("answers a config or a ConfigError naming the file for any text", () => {
    fc.assert(
      fc.property(yamlText, fc.string({ unit: "binary", maxLength: 200 }), (yaml, noise) => {
        load([{ name: "a.yaml", text: yaml }]);
        load([{ name: "b.yaml", text: noise }]);
        load(
          [
            { name: "a.yaml", text: yaml },
            { name: "b.yaml", text: yaml },
          ],
          limits({ aliasNodes: 5, depth: 3 }),
        );
      }),
      { numRuns: 400 },
    );
  });

  it("refuses alias chains exactly when their expansion passes the budget, after work bounded by it", () => {
    // Level 0 is a five-node map; each next level a sequence of `fanout` aliases of the one before, so the last holds
    // fanout^levels copies of level 0: up to 9^12, billions of nodes, were it expanded.
    const chain = fc.record({
      fanout: fc.integer({ min: 1, max: 9 }),
      levels: fc.integer({ min: 1, max: 12 }),
      budget: fc.integer({ min: 0, max: 3000 }),
    });
    fc.assert(
      fc.property(chain, ({ fanout, levels, budget }) => {
        const lines = ["domain: chain", "x:", "  - &l0 {key: k, value: v}"];
        for (let level = 1; level <= levels; level++) {
          const anchor = level < levels ? `&l${level} ` : "";
          lines.push(
            `  - ${anchor}[${Array(fanout)
              .fill(`*l${level - 1}`)
              .join(", ")}]`,
          );
        }
        // Nodes the aliases add: each alias in level n copies the whole subtree of level n-1.
        let subtree = 5; // the map of level 0, its two keys and two values
        let added = 0;
        for (let level = 1; level <= levels && added <= budget; level++) {
          added += fanout * subtree;
          subtree = 1 + fanout * subtree;
        }
        const result = load([{ name: "chain.yaml", text: lines.join("\n") }], limits({ aliasNodes: budget }));
        const refused = !result.ok && result.error.message === aliasMessage("chain.yaml", budget);
        expect(refused).toBe(added > budget);
      }),
      { numRuns: 200 },
    );
  });

  it("refuses nesting exactly past the depth limit, in every form, before the parser recurses", () => {
    const form = fc.constantFrom("flow-seq", "flow-map", "block-seq", "block-map");
    fc.assert(
      fc.property(form, fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 1, max: 120 }), (kind, depth, max) => {
        let value: string;
        if (kind === "flow-seq") value = `${"[".repeat(depth)}${"]".repeat(depth)}`;
        else if (kind === "flow-map") value = `${"{a: ".repeat(depth)}b${"}".repeat(depth)}`;
        else if (kind === "block-seq") value = `\n  ${"- ".repeat(depth)}b`;
        else {
          const keys = Array.from({ length: Math.min(depth, 150) }, (_, i) => `\n${"  ".repeat(i + 1)}a:`);
          value = `${keys.join("")} b`;
        }
        const actual = kind === "block-map" ? Math.min(depth, 150) : depth;
        // Under `x`, a key of the root map: one more level.
        const result = load([{ name: "deep.yaml", text: `domain: d\nx: ${value}\n` }], limits({ depth: max }));
        const refused = !result.ok && result.error.message === depthMessage("deep.yaml", max);
        expect(refused).toBe(actual + 1 > max);
      }),
      { numRuns: 300 },
    );
  });

  it("does not compose a document nested past the limit (composing recurses per level)", () => {
    const compose = vi.spyOn(Composer.prototype, "compose");
    try {
      const text = `domain: d\ndescriptors: ${"[".repeat(5000)}${"]".repeat(5000)}\n`;
      const refused = { ok: false, error: { message: depthMessage("deep.yaml") } };
      expect(load([{ name: "deep.yaml", text }])).toMatchObject(refused);
      expect(compose).not.toHaveBeenCalled();
      load([{ name: "flat.yaml", text: "domain: d\n" }]);
      expect(compose).toHaveBeenCalledTimes(1);
    } finally {
      compose.mockRestore();
    }
  });

  it("stops reading a text once it opens more collections than the limit (the parser's work grows with nesting)", () => {
    const next = vi.spyOn(Parser.prototype, "next");
    try {
      // 400 KB of brackets took the parser seconds before the finished document's check refused it.
      const text = `domain: d\ndescriptors: ${"[".repeat(400_000)}\n`;
      expect(load([{ name: "deep.yaml", text }])).toMatchObject({
        ok: false,
        error: { message: depthMessage("deep.yaml") },
      });
      // The lexemes before the value (key, indicator, spaces) and one per bracket up to one past the limit of 100.
      expect(next.mock.calls.length).toBeLessThan(120);
    } finally {
      next.mockRestore();
    }
  });

  it("counts aliases' nesting where they are placed", () => {
    const text = "domain: d\nx: &deep [[[[1]]]]\ny: [[[[[[*deep]]]]]]\n";
    expect(load([{ name: "a.yaml", text }], limits({ depth: 10 }))).toMatchObject({
      ok: false,
      error: { message: depthMessage("a.yaml", 10) },
    });
    expect(load([{ name: "a.yaml", text }], limits({ depth: 11 }))).toMatchObject({
      ok: false,
      error: { message: "a.yaml: config error, unknown key 'x'" },
    });
  });

  it("refuses a file over the size limit before parsing it, counting UTF-8 bytes", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), fc.integer({ min: 1, max: 200 }), (text, max) => {
        const size = new TextEncoder().encode(text).length;
        const result = load([{ name: "a.yaml", text }], limits({ fileBytes: max }));
        const setting = "RATELIMIT_CONFIG_MAX_FILE_BYTES";
        const message = `a.yaml: the file is larger than ${max} bytes (the limit set by ${setting})`;
        expect(!result.ok && result.error.message === message).toBe(size > max);
      }),
      { numRuns: 300 },
    );
  });

  it("counts UTF-8 bytes as TextEncoder writes them, lone surrogates included", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 100 }), (text) => {
        expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length);
      }),
      { numRuns: 300 },
    );
  });
});

/** A RateLimitConfig resource in proto3 JSON, mostly well-formed, sometimes not, of bounded size. */
const { descriptor: xdsDescriptor } = fc.letrec((tie) => ({
  descriptor: fc.record(
    {
      key: fc.oneof(fc.constantFrom("k", "path", ""), fc.string({ maxLength: 3 }), fc.integer()),
      value: fc.oneof(fc.constantFrom("v", "*"), fc.string({ maxLength: 3 })),
      rateLimit: fc.record(
        {
          unit: fc.oneof(fc.constantFrom("SECOND", "MINUTE", "HOUR", "DAY", "WEEK"), fc.integer({ min: -1, max: 9 })),
          requestsPerUnit: fc.oneof(fc.nat(), fc.constantFrom("7", "-1", 1.5)),
          unlimited: fc.boolean(),
          name: fc.string({ maxLength: 3 }),
          replaces: fc.array(fc.record({ name: fc.string({ maxLength: 3 }) }), { maxLength: 2 }),
        },
        { requiredKeys: [] },
      ),
      descriptors: fc.array(tie("descriptor"), { maxLength: 3 }),
      shadow_mode: fc.boolean(),
      detailedMetric: fc.oneof(fc.boolean(), fc.constant("yes")),
      extra: fc.constant(1),
    },
    { requiredKeys: ["key"] },
  ),
}));
const xdsResource = fc.record(
  {
    name: fc.oneof(fc.constantFrom("a", "b", ""), fc.string({ maxLength: 4 })),
    domain: fc.oneof(fc.constantFrom("d", "e"), fc.string({ maxLength: 3 })),
    descriptors: fc.array(xdsDescriptor, { maxLength: 4 }),
  },
  { requiredKeys: ["name"] },
);

describe("the xDS (JSON) config loader", () => {
  it("answers files or a message for any resources, and the files load or are refused with a ConfigError", () => {
    const resources = fc.array(fc.oneof(xdsResource, fc.jsonValue({ maxDepth: 4 })), { maxLength: 4 });
    fc.assert(
      fc.property(resources, (configs) => {
        const result = outcome(() => xdsConfigsToFiles(configs, limits()));
        if ("thrown" in result) throw new Error(`xdsConfigsToFiles threw ${String(result.thrown)}`);
        const files = result.value;
        if (files.ok) load(files.value);
        else expect(typeof files.error).toBe("string");
      }),
      { numRuns: 300 },
    );
  });

  it("refuses a resource nested past the limit before reading it, and keeps the YAML within it otherwise", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3000 }), fc.integer({ min: 3, max: 120 }), (levels, max) => {
        let descriptor: Record<string, unknown> = { key: "k", rateLimit: { unit: "DAY", requestsPerUnit: 1 } };
        for (let level = 1; level < levels; level++) descriptor = { key: "k", descriptors: [descriptor] };
        const resource = { name: "deep", domain: "d", descriptors: [descriptor] };
        // The resource, then per level an array and an object, and the innermost descriptor's rateLimit.
        const depth = 1 + 2 * levels + 1;
        expect(jsonValueTooDeep(resource, max)).toBe(depth > max);
        const files = xdsConfigsToFiles([resource], limits({ depth: max }));
        const message = `deep: the config ${tooDeepTail(max)}`;
        expect(files).toEqual(depth > max ? { ok: false, error: message } : { ok: true, value: [expect.anything()] });
        if (files.ok) expect(load(files.value, limits({ depth: max })).ok).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
});

describe("nesting of JSON text", () => {
  it("is counted on the text as JSON.parse nests it, brackets in strings aside", () => {
    const bracketed = fc.string({ unit: fc.constantFrom("[", "]", "{", "}", '"', "\\", "a"), maxLength: 8 });
    const value = fc.jsonValue({ maxDepth: 8 });
    fc.assert(
      fc.property(
        fc.oneof(value, fc.dictionary(bracketed, value, { maxKeys: 3 })),
        fc.integer({ min: 0, max: 10 }),
        (json, max) => {
          expect(jsonTextTooDeep(JSON.stringify(json), max)).toBe(jsonValueTooDeep(json, max));
        },
      ),
      { numRuns: 400 },
    );
  });
});

/** A /json request, mostly well-formed, with up to 80 descriptors of up to 40 entries (the limits are 64 and 32). */
const jsonRequest = fc.record({
  domain: fc.oneof(fc.constant("d"), fc.string({ maxLength: 3 })),
  descriptors: fc.array(
    fc.record(
      {
        entries: fc.array(fc.record({ key: fc.constantFrom("k", "u"), value: fc.constantFrom("v", "") }), {
          maxLength: 40,
        }),
        limit: fc.record({ requestsPerUnit: fc.nat(), unit: fc.constantFrom("SECOND", "DAY", 2, "NOPE") }),
        hits_addend: fc.oneof(fc.nat(), fc.constant("12")),
      },
      { requiredKeys: ["entries"] },
    ),
    { maxLength: 80 },
  ),
});

describe("the /json request decoder", () => {
  it("answers a request or a message for any text", () => {
    const text = fc.oneof(
      fc.string({ unit: "binary", maxLength: 200 }),
      fc.string({ unit: fc.constantFrom("{", "}", "[", "]", '"', ":", ",", "\\", "1", "a", " "), maxLength: 200 }),
      fc.json({ maxDepth: 5 }),
      jsonRequest.map((request) => JSON.stringify(request)),
    );
    fc.assert(
      fc.property(text, (body) => {
        const result = outcome(() => parseRateLimitRequestText(body, DEFAULT_REQUEST_LIMITS));
        if ("thrown" in result) throw new Error(`the decoder threw ${String(result.thrown)}`);
        if (!result.value.ok) expect(typeof result.value.error).toBe("string");
      }),
      { numRuns: 400 },
    );
  });

  it("refuses exactly the requests past the descriptor and entry limits, naming them", () => {
    fc.assert(
      fc.property(jsonRequest, (request) => {
        const result = parseRateLimitRequestText(JSON.stringify(request), DEFAULT_REQUEST_LIMITS);
        const count = request.descriptors.length;
        const longest = request.descriptors.findIndex((d) => d.entries.length > 32);
        if (count > 64) {
          expect(result).toEqual({
            ok: false,
            error: `the request has ${count} descriptors, more than 64 (the limit set by RATELIMIT_MAX_DESCRIPTORS)`,
          });
        } else if (longest >= 0 && request.descriptors.slice(0, longest).every((d) => d.limit?.unit !== "NOPE")) {
          const entries = request.descriptors[longest].entries.length;
          expect(result).toEqual({
            ok: false,
            error:
              `descriptor ${longest} has ${entries} entries, ` +
              "more than 32 (the limit set by RATELIMIT_MAX_DESCRIPTOR_ENTRIES)",
          });
        } else if (longest < 0) {
          expect(!result.ok && /limit set by/.test(result.error)).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("refuses text nested past the limit before parsing it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), (depth) => {
        const text = `{"domain":"d","descriptors":${"[".repeat(depth)}${"]".repeat(depth)}}`;
        const result = parseRateLimitRequestText(text);
        const message = `request body ${tooDeepTail(100)}`;
        expect(!result.ok && result.error === message).toBe(depth + 1 > 100);
      }),
      { numRuns: 100 },
    );
  });
});

describe("the limit on domain, key and value bytes", () => {
  const utf8 = new TextEncoder();
  /** Strings of any code points, lone surrogates included (TextEncoder and the stores write those as U+FFFD). */
  const text = fc.string({
    unit: fc.oneof(fc.constantFrom("a", "é", "€", "😀"), fc.string({ unit: "binary", maxLength: 1 })),
    maxLength: 12,
  });
  const request = fc.record({
    domain: text,
    descriptors: fc.array(fc.array(fc.record({ key: text, value: text }), { maxLength: 4 }), { maxLength: 4 }),
  });

  it("refuses exactly the first domain, key or value past the limit in UTF-8 bytes, on every wire's decoder", () => {
    fc.assert(
      fc.property(request, fc.integer({ min: 1, max: 40 }), ({ domain, descriptors }, max) => {
        const limits = { ...DEFAULT_REQUEST_LIMITS, valueBytes: { max, setting: "RATELIMIT_MAX_VALUE_BYTES" } };
        const tail = `more than ${max} (the limit set by RATELIMIT_MAX_VALUE_BYTES)`;
        const over = (subject: string, value: string) => {
          const bytes = utf8.encode(value).length;
          return bytes > max ? `${subject} is ${bytes} bytes long, ${tail}` : undefined;
        };
        const expected =
          over("the domain", domain) ??
          descriptors
            .flatMap((entries, index) =>
              entries.flatMap(({ key, value }, at) => [
                over(`descriptor ${index} entry ${at}: the key`, key),
                over(`descriptor ${index} entry ${at}: the value`, value),
              ]),
            )
            .find((problem) => problem !== undefined);
        const message = create(RateLimitRequestSchema, {
          domain,
          descriptors: descriptors.map((entries) => ({ entries })),
        });
        const decoded = requestFromProto(message, limits);
        if (expected === undefined) expect(decoded.ok).toBe(true);
        else expect(decoded).toEqual({ ok: false, error: expected });
        // /json decodes to the same message, so it answers the same (JSON text cannot carry a lone surrogate's bytes,
        // but its \u escape parses back to the same string).
        const json = JSON.stringify({ domain, descriptors: descriptors.map((entries) => ({ entries })) });
        expect(parseRateLimitRequestText(json, limits)).toEqual(decoded);
      }),
      { numRuns: 500 },
    );
  });
});
