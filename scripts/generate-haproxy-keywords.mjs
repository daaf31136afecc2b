#!/usr/bin/env node
// `node scripts/generate-haproxy-keywords.mjs`: writes src/proxy/haproxy-params/haproxy-keywords.ts, HAProxy's
// own tables of sample fetches, converters and ACL keywords as the installed haproxy prints them (`-dKsmp`, `-dKcnv`,
// `-dKacl`), and the type casts it makes, probed with `haproxy -c`. The params vetter takes argument counts and types,
// sample types and where each fetch may be used from it. test/integration/haproxy-keywords.test.ts fails while the
// committed module differs from what this script reads from the haproxy on the PATH.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as prettier from "prettier";

export const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
export const OUTPUT = path.join(root, "src", "proxy", "haproxy-params", "haproxy-keywords.ts");

/** @typedef {{ args: string[], required: number }} Arguments */
/** @typedef {Arguments & { out: string, usage: string }} Fetch */
/** @typedef {Arguments & { input: string, out: string }} Converter */
/** @typedef {{ fetch: string, match: string }} Acl */
/**
 * @typedef {object} Keywords
 * @property {string} version
 * @property {string[]} places
 * @property {Record<string, Fetch>} fetches
 * @property {Record<string, Converter>} converters
 * @property {Record<string, Acl>} acls
 * @property {Record<string, string[]>} casts
 * @property {Record<string, string[]>} matches
 */

/** @param {string[]} args */
function haproxy(args) {
  const result = spawnSync("haproxy", args, { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  if (result.error) throw new Error(`cannot run haproxy: ${result.error.message}`);
  return result;
}

/** The installed haproxy's version ("2.6.12-1+deb12u4"). */
export function haproxyVersion() {
  const match = /^HAProxy version (\S+)/m.exec(haproxy(["-v"]).stdout);
  if (!match) throw new Error("haproxy -v printed no version");
  return match[1];
}

/**
 * One keyword class as `haproxy -dK<kind>` prints it (the dump ends in a check of an empty file, exit 2).
 * @param {string} kind
 */
export function dumpKeywords(kind) {
  const { stdout } = haproxy([`-dK${kind}`, "-q", "-c", "-f", "/dev/null"]);
  if (!stdout.trim()) throw new Error(`haproxy -dK${kind} printed nothing`);
  return stdout;
}

/**
 * "string[,integer]" → { args: ["string", "integer"], required: 1 }. HAProxy prints the optional arguments inside
 * brackets, from the first optional one to the end (src/sample.c, smp_dump_fetch_kw).
 * @param {string | undefined} text
 * @returns {Arguments}
 */
export function parseArguments(text) {
  if (text === undefined) return { args: [], required: 0 };
  const bracket = text.indexOf("[");
  const mandatory = bracket < 0 ? text : text.slice(0, bracket);
  const args = text
    .replace(/[[\]]/g, "")
    .split(",")
    .filter((arg) => arg !== "");
  const required = mandatory.split(",").filter((arg) => arg !== "").length;
  return { args, required };
}

/**
 * `-dKsmp`: a header naming each usage column (the check places of src/sample.c, fetch_ckp_names), then one line per
 * fetch: `[ Y . Y ... ] name(args): type`.
 * @param {string} text
 */
export function parseFetches(text) {
  /** @type {string[]} */
  const places = [];
  /** @type {Record<string, Fetch>} */
  const fetches = {};
  for (const line of text.split("\n")) {
    const place = /^#[ /]*_\.-* (.+)$/.exec(line);
    if (place) places.push(place[1]);
    if (!line.startsWith("[")) continue;
    const match = /^\[ ((?:[Y.] )+)\] ([^(:\s]+)(?:\((.*)\))?: (\w+)$/.exec(line);
    if (!match) throw new Error(`unexpected sample fetch line: ${line}`);
    const [, columns, name, args, out] = match;
    const usage = columns.replace(/ /g, "");
    fetches[name] = { out, ...parseArguments(args), usage };
  }
  const widths = new Set(Object.values(fetches).map((fetch) => fetch.usage.length));
  if (places.length === 0 || widths.size !== 1 || !widths.has(places.length)) {
    throw new Error(`the usage columns (${places.length} named) do not match the fetch lines (${[...widths]})`);
  }
  return { places, fetches };
}

/**
 * `-dKcnv`: `name(args): OUT => IN`. HAProxy 2.6 prints the output type first (src/sample.c, smp_dump_conv_kw:
 * `printf(": %s => %s", smp_to_type[kw->out_type], smp_to_type[kw->in_type])`), so `length: sint => str` reads a
 * string and gives an integer.
 * @param {string} text
 */
export function parseConverters(text) {
  /** @type {Record<string, Converter>} */
  const converters = {};
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([^(:\s]+)(?:\((.*)\))?: (\w+) => (\w+)$/.exec(line);
    if (!match) throw new Error(`unexpected converter line: ${line}`);
    const [, name, args, out, input] = match;
    converters[name] = { input, out, ...parseArguments(args) };
  }
  return converters;
}

/**
 * `-dKacl`: `name = fetch -m match`.
 * @param {string} text
 */
export function parseAcls(text) {
  /** @type {Record<string, Acl>} */
  const acls = {};
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^(\S+) = (\S+) -m (\S+)$/.exec(line);
    if (!match) throw new Error(`unexpected ACL keyword line: ${line}`);
    acls[match[1]] = { fetch: match[2], match: match[3] };
  }
  return acls;
}

// ---- casts, probed with haproxy -c ----

/** An expression of each sample type (a constant fetch), to probe which converters may follow it. */
const TYPE_SOURCES = {
  any: "var(txn.probe)",
  bool: "always_true",
  sint: "int(1)",
  ipv4: "ipv4(127.0.0.1)",
  ipv6: "ipv6(::1)",
  str: "str(a)",
  bin: "bin(00)",
  meth: "meth(GET)",
};
/** A converter reading each input type: HAProxy refuses it after a sample it cannot cast to that type. */
const TYPE_SINKS = { any: "debug", bool: "iif(a,b)", sint: "neg", addr: "ipmask(24)", str: "lower", bin: "sha1" };
/** ACL match methods, each with a pattern it parses: HAProxy refuses the method after a sample it cannot cast. */
const MATCH_PATTERNS = {
  found: "",
  bool: "",
  int: " 1",
  ip: " 127.0.0.1",
  bin: " 00",
  len: " 1",
  str: " a",
  beg: " a",
  sub: " a",
  dir: " a",
  dom: " a",
  end: " a",
  reg: " a",
};

const PROBE_HEADER = [
  "defaults",
  "    mode http",
  "    timeout connect 5s",
  "    timeout client 5s",
  "    timeout server 5s",
  "backend probe",
];

/**
 * Whether haproxy accepts one backend line: true, false when it alerts with `refusal`, and a thrown error for any
 * other alert (the probe itself would be wrong). One line per run: HAProxy stops at the first refused rule.
 * @param {string} dir
 * @param {string} line
 * @param {RegExp} refusal
 */
function accepts(dir, line, refusal) {
  const file = path.join(dir, "probe.cfg");
  writeFileSync(file, `${[...PROBE_HEADER, `    ${line}`].join("\n")}\n`);
  const { stdout, stderr } = haproxy(["-c", "-f", file]);
  const alerts = `${stdout}${stderr}`.split("\n").filter((text) => text.includes("[ALERT]"));
  if (alerts.length === 0) return true;
  if (alerts.some((text) => refusal.test(text))) return false;
  throw new Error(`the probe "${line}" failed for another reason:\n${alerts.join("\n")}`);
}

/**
 * Checks that each probe is what it claims, by HAProxy's own tables.
 * @param {Record<string, Fetch>} fetches
 * @param {Record<string, Converter>} converters
 */
function checkProbes(fetches, converters) {
  for (const [type, source] of Object.entries(TYPE_SOURCES)) {
    const name = source.split("(")[0];
    if (fetches[name]?.out !== type) throw new Error(`the probe ${source} does not give a ${type}`);
  }
  for (const [type, sink] of Object.entries(TYPE_SINKS)) {
    const name = sink.split("(")[0];
    if (converters[name]?.input !== type) throw new Error(`the probe ${sink} does not read a ${type}`);
  }
  for (const converter of Object.values(converters)) {
    if (!(converter.input in TYPE_SINKS))
      throw new Error(`no probe reads a ${converter.input}, as some converter does`);
  }
}

/**
 * For each sample type a probe can make: the converter input types HAProxy casts it to (src/sample.c sample_casts,
 * as the running binary applies it) and the ACL match methods it accepts after it.
 * @param {Record<string, Fetch>} fetches
 * @param {Record<string, Converter>} converters
 */
export function probeCasts(fetches, converters) {
  checkProbes(fetches, converters);
  const dir = mkdtempSync(path.join(tmpdir(), "haproxy-keywords-"));
  try {
    /** @type {Record<string, string[]>} */
    const casts = {};
    /** @type {Record<string, string[]>} */
    const matches = {};
    for (const [from, source] of Object.entries(TYPE_SOURCES)) {
      if (!accepts(dir, `http-request set-var(txn.p) ${source}`, /$^/)) throw new Error(`${source} is refused`);
      casts[from] = Object.entries(TYPE_SINKS)
        .filter(([, sink]) => accepts(dir, `http-request set-var(txn.p) ${source},${sink}`, /cannot be applied/))
        .map(([to]) => to);
      matches[from] = Object.entries(MATCH_PATTERNS)
        .filter(([method, pattern]) => accepts(dir, `acl p ${source} -m ${method}${pattern}`, /cannot be used with/))
        .map(([method]) => method);
    }
    return { casts, matches };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Everything the module holds, read from the haproxy on the PATH.
 * @returns {Keywords}
 */
export function readKeywords() {
  const { places, fetches } = parseFetches(dumpKeywords("smp"));
  const converters = parseConverters(dumpKeywords("cnv"));
  const acls = parseAcls(dumpKeywords("acl"));
  const { casts, matches } = probeCasts(fetches, converters);
  return { version: haproxyVersion(), places, fetches, converters, acls, casts, matches };
}

// ---- the module ----

/** @param {unknown} value */
const json = (value) => JSON.stringify(value);
/**
 * @template T
 * @param {Record<string, T>} table
 * @param {(entry: T) => string} render
 */
const entries = (table, render) =>
  Object.keys(table)
    .sort()
    .map((name) => `  ${json(name)}: ${render(table[name])},`)
    .join("\n");

/**
 * The module's header and types: the version, the sample and argument types, the usage columns.
 * @param {Keywords} keywords
 */
function declarations({ version, places, fetches, converters }) {
  /** @param {string[]} values */
  const unique = (values) => [...new Set(values)].sort().map(json).join(" | ");
  const keywords = [...Object.values(fetches), ...Object.values(converters)];
  return `// GENERATED by scripts/generate-haproxy-keywords.mjs from HAProxy ${version} (\`haproxy -dKsmp\`, \`-dKcnv\`,
// \`-dKacl\`, and its type casts probed with \`haproxy -c\`). Do not edit: run \`node scripts/generate-haproxy-keywords.mjs\`
// with the HAProxy the load balancers run. test/integration/haproxy-keywords.test.ts fails while this file differs.

/** The HAProxy these tables were read from. */
export const HAPROXY_KEYWORDS_VERSION = ${json(version)};

/** A sample's type, as HAProxy names it. */
export type SampleType = ${unique([...Object.values(fetches).map((f) => f.out), ...Object.values(converters).flatMap((c) => [c.input, c.out])])};

/** A keyword argument's type, as HAProxy names it. */
export type ArgumentType = ${unique(keywords.flatMap((k) => k.args))};

/** The places where HAProxy checks that a sample fetch may be used: the columns of each fetch's \`usage\`. */
export const SAMPLE_USAGE_PLACES = ${json(places)} as const;

export type UsagePlace = (typeof SAMPLE_USAGE_PLACES)[number];

/** Arguments: their types in order; the first \`required\` must be given. */
export interface Arguments {
  args: readonly ArgumentType[];
  required: number;
}

/** A sample fetch: its output type, arguments, and \`usage\`: "Y" where it may be used, per SAMPLE_USAGE_PLACES. */
export interface FetchKeyword extends Arguments {
  out: SampleType;
  usage: string;
}

/** A converter: the type it reads and the type it gives. */
export interface ConverterKeyword extends Arguments {
  input: SampleType;
  out: SampleType;
}

/** An ACL keyword: the sample fetch it reads and how it matches. */
export interface AclKeyword {
  fetch: string;
  match: string;
}
`;
}

/**
 * The module's tables.
 * @param {Keywords} keywords
 */
function tables({ fetches, converters, acls, casts, matches }) {
  return `
/** Every sample fetch of this HAProxy. */
export const SAMPLE_FETCH_KEYWORDS: Readonly<Record<string, FetchKeyword>> = {
${entries(fetches, (f) => `{ out: ${json(f.out)}, args: ${json(f.args)}, required: ${f.required}, usage: ${json(f.usage)} }`)}
};

/** Every converter of this HAProxy. */
export const CONVERTER_KEYWORDS: Readonly<Record<string, ConverterKeyword>> = {
${entries(converters, (c) => `{ input: ${json(c.input)}, out: ${json(c.out)}, args: ${json(c.args)}, required: ${c.required} }`)}
};

/** Every ACL keyword of this HAProxy. */
export const ACL_KEYWORD_TABLE: Readonly<Record<string, AclKeyword>> = {
${entries(acls, (a) => `{ fetch: ${json(a.fetch)}, match: ${json(a.match)} }`)}
};

/**
 * The converter input types HAProxy casts a sample of each type to, probed with \`haproxy -c\` (a type missing here
 * was not probed: no fetch gives it, so it is treated as castable to nothing).
 */
export const SAMPLE_CASTS: Readonly<Partial<Record<SampleType, readonly SampleType[]>>> = {
${entries(casts, json)}
};

/** The ACL match methods (\`-m\`) HAProxy accepts after a sample of each type, probed with \`haproxy -c\`. */
export const ACL_MATCHES_BY_TYPE: Readonly<Partial<Record<SampleType, readonly string[]>>> = {
${entries(matches, json)}
};
`;
}

/**
 * The TypeScript module, formatted as `prettier --check` expects.
 * @param {Keywords} keywords
 */
export async function renderModule(keywords) {
  const options = (await prettier.resolveConfig(OUTPUT)) ?? {};
  return prettier.format(declarations(keywords) + tables(keywords), { ...options, filepath: OUTPUT });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const keywords = readKeywords();
  writeFileSync(OUTPUT, await renderModule(keywords));
  console.log(
    `wrote ${path.relative(root, OUTPUT)} from HAProxy ${keywords.version}: ${Object.keys(keywords.fetches).length} fetches, ` +
      `${Object.keys(keywords.converters).length} converters, ${Object.keys(keywords.acls).length} ACL keywords`,
  );
}
