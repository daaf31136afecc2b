// docs/settings.md as the settings schemas generate it (kind, default and alias from their zod metadata, meaning from
// the *-meanings.ts module beside each, which the Worker never imports): `npm run docs:settings`
// (scripts/docs-settings.mjs) writes it, and test/docs/settings.node.test.ts checks the committed page against it.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod/v4";
import { GatewaySettingsSchema } from "../../grpc-gateway/settings.mjs";
import { JobSettings } from "../../src/jobs/settings";
import { jobSettingMeanings } from "../../src/jobs/settings-meanings";
import { NewsSettings } from "../../src/news/settings";
import { newsSettingMeanings } from "../../src/news/settings-meanings";
import { ProxySettings } from "../../src/proxy/settings";
import { proxySettingMeanings } from "../../src/proxy/settings-meanings";
import { CounterStoreSettings, storeAliasOf } from "../../src/ratelimit/counter-store-settings";
import { counterStoreSettingMeanings } from "../../src/ratelimit/counter-store-settings-meanings";
import { observabilityFields } from "../../src/ratelimit/observability-settings";
import {
  mogrifierSettingDocs,
  observabilitySettingMeanings,
} from "../../src/ratelimit/observability-settings-meanings";
import { limitFields, RateLimitSettings } from "../../src/ratelimit/settings";
import { rateLimitSettingMeanings } from "../../src/ratelimit/settings-meanings";
import { DiagnosticsSettings } from "../../src/shared/d1-usage";
import { diagnosticsSettingMeanings } from "../../src/shared/d1-usage-meanings";
import { logSettingDocs } from "../../src/shared/log-meanings";
import { type SettingDoc } from "../../src/shared/settings";

const root = path.join(import.meta.dirname, "..", "..");
export const settingsPagePath = path.join(root, "docs", "settings.md");

/** The zod internals the generator walks: a schema's definition and, for numbers, its bounds. */
export interface Node {
  _zod: { def: { type: string; in?: Node; out?: Node; innerType?: Node; shape?: Record<string, Node> } };
  minValue?: number | null;
  maxValue?: number | null;
}

/** A documented setting, whether a schema field or a SettingDoc; `bounds` are a number's limits, if any. */
interface Setting extends SettingDoc {
  secret?: boolean;
  aliasOf?: string;
  items?: string;
  bounds?: { min?: number; max?: number };
  /** The schema carries a meaning in its metadata: a Worker's field must not, or the text is in the bundle. */
  meaningOnSchema?: boolean;
}

/** The metadata of a field: what the helpers attached to the schemas it pipes from, then its own (which wins). */
function metaOf(schema: Node): z.GlobalMeta {
  const own = z.globalRegistry.get(schema as unknown as z.ZodType) ?? {};
  const inner = schema._zod.def.type === "pipe" && schema._zod.def.in ? metaOf(schema._zod.def.in) : {};
  return { ...inner, ...own };
}

/** The tightest bounds of the numbers a field's value passes through (safe-integer limits are no bound). */
function boundsOf(schema: Node): { min?: number; max?: number } {
  const { def } = schema._zod;
  if (def.type === "number") {
    const min = schema.minValue ?? undefined;
    const max = schema.maxValue ?? undefined;
    return {
      min: min === undefined || min <= Number.MIN_SAFE_INTEGER ? undefined : min,
      max: max === undefined || max >= Number.MAX_SAFE_INTEGER ? undefined : max,
    };
  }
  const parts = [def.in, def.out, def.innerType].filter((part): part is Node => part !== undefined).map(boundsOf);
  const pick = (values: (number | undefined)[], choose: (...n: number[]) => number) => {
    const known = values.filter((value): value is number => value !== undefined);
    return known.length ? choose(...known) : undefined;
  };
  return {
    min: pick(
      parts.map((p) => p.min),
      Math.max,
    ),
    max: pick(
      parts.map((p) => p.max),
      Math.min,
    ),
  };
}

/** The fields of an object schema, found through the pipes that wrap it (preprocess, refine, transform). */
function shapeOf(schema: Node): Record<string, Node> {
  const { def } = schema._zod;
  if (def.type === "object" && def.shape) return def.shape;
  for (const part of [def.in, def.out]) {
    if (part) {
      const shape = shapeOf(part);
      if (Object.keys(shape).length) return shape;
    }
  }
  return {};
}

/**
 * A field as the page lists it: what its schema's metadata says, and its meaning, from its *-meanings.ts module when
 * given, else from the metadata (the gRPC gateway's, a Node program, carry theirs).
 */
export function settingOf(name: string, schema: Node, meaning?: string): Setting {
  const meta = metaOf(schema);
  return {
    name,
    kind: meta.kind!,
    description: meaning ?? meta.description ?? "",
    meaningOnSchema: meta.description !== undefined,
    default: meta.default,
    choices: meta.choices,
    items: meta.items,
    alias: meta.alias ?? storeAliasOf(name),
    aliasOf: meta.aliasOf,
    secret: meta.secret,
    bounds: boundsOf(schema),
  };
}

/** The fields of a shape, each with its meaning from `meanings` (its *-meanings.ts module) or else its metadata. */
const fieldsOf = (
  shape: Record<string, unknown>,
  meanings: Partial<Record<string, string>> = {},
  keep: (name: string) => boolean = () => true,
): Setting[] =>
  Object.entries(shape)
    .filter(([name]) => keep(name))
    .map(([name, schema]) => settingOf(name, schema as Node, meanings[name]));

const isRateLimitField = (name: string) => !(name in limitFields) && !(name in observabilityFields);

/** One table of the page. */
interface Table {
  heading: string;
  intro: string;
  /** The first part of a section whose table is preceded by the section's own intro. */
  subheading?: string;
  settings: Setting[];
}

export const workerTables: Table[] = [
  {
    heading: "## Proxy configuration API",
    intro: "Read by src/proxy/settings.ts.",
    settings: fieldsOf(shapeOf(ProxySettings as unknown as Node), proxySettingMeanings),
  },
  {
    heading: "## News API",
    intro: "Read by src/news/settings.ts.",
    settings: fieldsOf(shapeOf(NewsSettings as unknown as Node), newsSettingMeanings),
  },
  {
    heading: "## Rate limit service",
    intro: oneParagraph`
      Read by src/ratelimit/settings.ts, with the names of the spec and its defaults, except where a row says why it
      differs (BACKEND_TYPE, the KVSTORE_* time-outs). Where the reference service
      (envoyproxy/ratelimit) names a setting otherwise, its name is the alias. The reference's HOST, PORT, DEBUG_HOST
      and DEBUG_PORT are not read: the Worker serves every route on its own origin.`,
    subheading: "### Rules and answers",
    settings: fieldsOf(shapeOf(RateLimitSettings as unknown as Node), rateLimitSettingMeanings, isRateLimitField),
  },
  {
    heading: "### Request and configuration limits",
    intro: oneParagraph`
      Not in the spec (the reference has none): each bounds the work and memory one request can cost, and every
      refusal names its setting.`,
    settings: fieldsOf(limitFields, rateLimitSettingMeanings),
  },
  {
    heading: "### Counter stores",
    intro: oneParagraph`
      Where the counters live (BACKEND_TYPE) and how each store is reached. Every KVSTORE_* setting also reads the
      reference's REDIS_* name, every OBJCACHE_* one the MEMCACHE_* name.`,
    settings: fieldsOf(shapeOf(CounterStoreSettings as unknown as Node), counterStoreSettingMeanings),
  },
  {
    heading: "### Statistics, metrics and traces",
    intro: oneParagraph`
      Read by src/ratelimit/stats/; the mogrifier variables, whose names the operator chooses, by
      src/ratelimit/stats/statsd.ts.`,
    settings: [...fieldsOf(observabilityFields, observabilitySettingMeanings), ...mogrifierSettingDocs],
  },
  {
    heading: "## Jobs",
    intro: "Read by src/jobs/settings.ts: the queue consumer and the cron triggers of every service.",
    settings: fieldsOf(shapeOf(JobSettings as unknown as Node), jobSettingMeanings),
  },
  {
    heading: "## Logging",
    intro: "Every service of the Worker; read by src/shared/log.ts.",
    settings: logSettingDocs,
  },
  {
    heading: "## Diagnostics",
    intro: "Every service of the Worker; read by src/shared/d1-usage.ts.",
    settings: fieldsOf(shapeOf(DiagnosticsSettings as unknown as Node), diagnosticsSettingMeanings),
  },
];

const gatewayTable: Table = {
  heading: "## gRPC gateway",
  intro: oneParagraph`
    The environment of \`npm run grpc-gateway\`, the Node program beside the Worker that serves Envoy's gRPC rate limit
    API (and, with CONFIG_TYPE=GRPC_XDS_SOTW, is the xDS client); read by grpc-gateway/settings.mjs. \`npm start\`
    passes it the CONFIG_*, XDS_*, GRPC_*, FORCE_START_* and RATELIMIT_ADMIN_TOKEN values of .dev.vars. A malformed
    value stops the start with a message naming the variable.`,
  settings: fieldsOf(shapeOf(GatewaySettingsSchema as unknown as Node)),
};

export const allTables = [...workerTables, gatewayTable];
const allSettings = allTables.flatMap((table) => table.settings);

/** Collapses the white space of an indented template into single spaces, keeping blank lines as paragraph breaks. */
function oneParagraph(strings: TemplateStringsArray, ...values: unknown[]): string {
  const text = strings.reduce((all, part, index) => all + String(values[index - 1]) + part);
  return text
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.replace(/\s+/g, " ").trim())
    .join("\n\n");
}

/** The [vars] of wrangler.toml: what a deployment and `wrangler dev` set unless .dev.vars says otherwise. */
function wranglerVars(): Map<string, string> {
  const text = readFileSync(path.join(root, "wrangler.toml"), "utf8");
  const section = text.split(/^\[vars\]\s*$/m)[1]?.split(/^\[/m)[0] ?? "";
  return new Map([...section.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"([^"]*)"/gm)].map(([, k, v]) => [k, v]));
}

/** The names the code knows as bindings (D1, Durable Objects, queues, assets), which are not settings. */
function bindingNames(): Set<string> {
  const text = readFileSync(path.join(root, "wrangler.toml"), "utf8");
  return new Set([...text.matchAll(/^\s*(?:binding|name)\s*=\s*"([A-Z][A-Z0-9_]*)"/gm)].map(([, name]) => name));
}

const code = (text: string) => `\`${text}\``;
const cell = (text: string) => text.replace(/\s+/g, " ").replace(/\|/g, "\\|").trim();

/** `1048576` as `1048576` (1 MiB), for the byte counts. */
function byteSize(value: number): string {
  if (value >= 1024 * 1024 && value % (1024 * 1024) === 0) return ` (${value / (1024 * 1024)} MiB)`;
  if (value >= 1024 && value % 1024 === 0) return ` (${value / 1024} KiB)`;
  return "";
}

/** Milliseconds as the settings' error messages write them: seconds below two minutes. */
function durationText(ms: number): string {
  return ms >= 120_000 && ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function typeCell(setting: Setting): string {
  const { min, max } = setting.bounds ?? {};
  let type: string;
  switch (setting.kind) {
    case "choice":
      type = `one of ${(setting.choices ?? []).map(code).join(", ")}`;
      break;
    case "list":
      type = `list of ${setting.items ?? "values"}`;
      break;
    case "url":
      type = "URL";
      break;
    case "duration":
      type = max === undefined ? "duration" : `duration, at most ${durationText(max)}`;
      break;
    case "integer":
    case "number":
      type =
        min !== undefined && max !== undefined
          ? `${setting.kind}, ${min} to ${max}`
          : min !== undefined
            ? `${setting.kind} ≥ ${min}`
            : max !== undefined
              ? `${setting.kind} ≤ ${max}`
              : setting.kind;
      break;
    default:
      type = setting.kind;
  }
  return setting.secret ? `${type}, **secret**` : type;
}

function defaultCell(setting: Setting, vars: Map<string, string>): string {
  const value = setting.default;
  let text =
    value === undefined
      ? "unset"
      : value === ""
        ? "empty"
        : code(value) + (/BYTES/.test(setting.name) && /^\d+$/.test(value) ? byteSize(Number(value)) : "");
  const configured = vars.get(setting.name);
  if (configured !== undefined && configured !== (value ?? "")) text += `; wrangler.toml: ${code(configured)}`;
  return text;
}

/**
 * Puts the setting names a text mentions in code spans, outside existing ones: known names (alone or as NAME=VALUE)
 * and name patterns (`KVSTORE_*`, `TAGGED_METRICSD_MOGRIFIER_<N>_NAME`), which markdown would otherwise mangle.
 */
function withCodeNames(text: string, names: Set<string>): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.startsWith("`")
        ? part
        : part.replace(/\b[A-Za-z][A-Za-z0-9_]*(?:<N>[A-Z0-9_]*)?\*?(?:=[A-Za-z0-9_]+)?/g, (word) =>
            names.has(word.split("=")[0]) || word.endsWith("_*") || word.includes("<N>") ? code(word) : word,
          ),
    )
    .join("");
}

function renderTable(table: Table, names: Set<string>, vars: Map<string, string>): string {
  const aliasesOf = new Map<string, string[]>();
  for (const setting of table.settings) {
    if (setting.aliasOf) aliasesOf.set(setting.aliasOf, [...(aliasesOf.get(setting.aliasOf) ?? []), setting.name]);
  }
  const rows = table.settings
    .filter((setting) => !setting.aliasOf)
    .map((setting) => {
      const aliases = [...(setting.alias ? [setting.alias] : []), ...(aliasesOf.get(setting.name) ?? [])];
      return `| ${[
        code(setting.name),
        typeCell(setting),
        defaultCell(setting, vars),
        cell(withCodeNames(setting.description, names)),
        aliases.map(code).join(", "),
      ].join(" | ")} |`;
    });
  return [
    table.heading,
    "",
    withCodeNames(table.intro, names),
    "",
    ...(table.subheading ? [table.subheading, ""] : []),
    "| name | type | default | meaning | alias |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/** The agent's own --help: its options are flags, and its environment is listed there. */
function agentHelp(): string {
  return execFileSync(process.execPath, [path.join(root, "haproxy-agent", "agent.mjs"), "--help"], {
    encoding: "utf8",
  }).trimEnd();
}

export function renderSettingsPage(): string {
  const names = new Set(allSettings.map((setting) => setting.name));
  const vars = wranglerVars();
  const intro = oneParagraph`
    Every setting of the Worker and of the Node programs beside it. This page is generated from the settings schemas
    (src/*/settings.ts, grpc-gateway/settings.mjs) by test/support/settings-page.ts: change a schema, then run
    \`npm run docs:settings\`. \`npm test\` fails while a setting lacks a meaning or this page is out of date.

    **Where the Worker's settings come from.** Each is a Worker variable: \`[vars]\` in wrangler.toml (the default
    column names the values it sets), for \`wrangler dev\` also .dev.vars (\`npm start\` creates it from
    .dev.vars.example), or \`--var NAME:value\`. Settings marked **secret** are set with \`wrangler secret put NAME\`
    (locally in .dev.vars) and never written in wrangler.toml. The gRPC gateway and the HAProxy agent read their
    process environment.

    **How values are written.** An unset or empty variable means the default. Booleans are \`true\`, \`false\`,
    \`1\`, \`0\`, \`t\` or \`f\` (as Go's \`strconv.ParseBool\` reads them), in any case. Durations are written as Go writes them: \`500ms\`, \`10s\`, \`1m30s\`, \`0\`. Lists
    are separated by commas (the meaning says where white space also separates). A malformed value makes the
    Worker's service that reads it answer 500 with a message naming the variable, never its value; the gRPC gateway
    refuses to start. \`npm start\` checks every value first, including what only a whole set of settings decides
    (a counter store's addresses, the statistics and metrics mapping, the log settings), and names each problem
    before anything starts.

    **Aliases.** The alias column lists other names the same setting is read from, mostly the reference service's
    (envoyproxy/ratelimit); when both are set, the name wins. Words such as isolate, Durable Object, descriptor or
    xDS are explained in the [glossary](glossary.md).`;
  const agentEnvironment = [...envReadsIn(["haproxy-agent"])].sort();
  const agent = [
    "## HAProxy agent",
    "",
    oneParagraph`
      \`npm run haproxy-agent\` runs on each load balancer and installs the configurations the proxy API generates.
      It takes its settings as command-line options, and from the environment the secret
      ${agentEnvironment.map(code).join(", ")}: the token of the proxy API's setting of that name. Its \`--help\`:`,
    "",
    "```text",
    agentHelp(),
    "```",
  ].join("\n");
  return [
    "# Settings",
    "",
    "<!-- Generated by test/support/settings-page.ts from the settings schemas: run `npm run docs:settings`. -->",
    "",
    withCodeNames(intro, names),
    "",
    ...allTables.map((table) => renderTable(table, names, vars) + "\n"),
    withCodeNames(agent, new Set(["HAPROXY_AGENT_TOKEN"])),
    "",
  ].join("\n");
}

/**
 * The variable names read straight off an env object: `env.NAME`, `c.env.NAME`, `vars.NAME`, `process.env.NAME` and
 * `env["NAME"]`, for names that start with a capital (bindings excepted). A simple textual scan: it misses names built
 * at run time (the mogrifier variables, documented by hand in mogrifierSettingDocs) and destructured reads, and every
 * schema field is on the page by construction, so this only guards reads that bypass the schemas.
 */
export function envReadsIn(folders: string[]): Set<string> {
  const found = new Set<string>();
  const bindings = bindingNames();
  for (const folder of folders) {
    const files = readdirSync(path.join(root, folder), { recursive: true, encoding: "utf8" }).filter(
      (file) => /\.(ts|mjs)$/.test(file) && !file.startsWith(path.join("ratelimit", "gen")),
    );
    for (const file of files) {
      const text = readFileSync(path.join(root, folder, file), "utf8");
      for (const [, a, b] of text.matchAll(
        /\b(?:env|vars)\??\.([A-Z][A-Za-z0-9_]*)\b|\benv\[["']([A-Z][A-Za-z0-9_]*)["']\]/g,
      )) {
        const name = a ?? b;
        if (!bindings.has(name)) found.add(name);
      }
    }
  }
  return found;
}
