#!/usr/bin/env node
// `npm run bench:proxy-generation-memory`: the memory one gensynchaprx needs, as a function of what the installation
// holds, to size the installation's bounds (PROXY_MAX_INSTALLATION_*) so that a generation fits the Worker's 128 MB.
// The Worker's own code runs: loadInstallation and listCertificates through drizzle over a D1 binding that answers
// from prepared rows (the edge: each answer parsed afresh from JSON, as D1's arrive), then generateHaproxyBundle,
// bundleFiles, bundleDigest, the stored version's files and the JSON body pushed to the agent. Every stage's output is
// kept until the end, as generateAndApply keeps them, and the text bundleDigest hashes is counted too: the figure is
// the live heap (V8 heap plus array buffers, after a full GC) at the generation's peak.
// Each measurement runs in a fresh Node process (--expose-gc), after a base installation and one step along one
// dimension at a time, so each dimension's cost per unit is a difference of two runs. Node's V8 runs without pointer
// compression, which workerd's has: objects take up to twice the room they take in the Worker, so the figures err high.
// BENCH_ROUNDS (default 3) runs per point; the median is used.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { unstable_readConfig } from "wrangler";
import { root } from "../test/support/processes.mjs";
import { median } from "./samples.mjs";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MIB = 1024 * 1024;

/** The generation's modules, bundled once for Node with the Worker's aliases (wrangler.toml [alias]). */
async function bundleModules(dir) {
  const alias = unstable_readConfig({ config: path.join(root, "wrangler.toml") }).alias ?? {};
  const outfile = path.join(dir, "generation.mjs");
  await build({
    stdin: {
      contents: `
        export { drizzle } from "drizzle-orm/d1";
        export { loadInstallation } from "./src/proxy/installation/load";
        export { listCertificates } from "./src/proxy/pki/certificates";
        export { bundleDigest, bundleFiles, generateHaproxyBundle } from "./src/proxy/haproxy/config";`,
      resolveDir: root,
      loader: "ts",
    },
    bundle: true,
    format: "esm",
    platform: "node",
    outfile,
    // Exact specifiers only, as wrangler matches them ("zod" but not "zod/v4"): esbuild's own alias takes prefixes.
    plugins: [
      {
        name: "wrangler-aliases",
        setup(builder) {
          for (const [name, target] of Object.entries(alias)) {
            const exact = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
            builder.onResolve({ filter: exact }, () => ({ path: path.resolve(root, target) }));
          }
        },
      },
    ],
    logLevel: "error",
  });
  return outfile;
}

/** The measuring child: builds the installation's rows, then runs one generation and prints the heap it held. */
const CHILD = String.raw`
const [modulePath, shapeText] = process.argv.slice(2);
const shape = JSON.parse(shapeText);
const { drizzle, loadInstallation, listCertificates, generateHaproxyBundle, bundleFiles, bundleDigest } =
  await import(modulePath);

const base64 = (bytes) => {
  let text = "";
  for (let i = 0; i < bytes; i++) text += "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(i * 7919) % 64];
  return text.match(/.{1,64}/g).join("\n");
};
const pem = (label, bytes) => "-----BEGIN " + label + "-----\n" + base64(bytes) + "\n-----END " + label + "-----\n";
// A Let's Encrypt ECDSA chain (leaf with its SCTs, then the intermediate) and a P-256 PKCS#8 key, in PEM sizes.
const CHAIN = pem("CERTIFICATE", 1040) + pem("CERTIFICATE", 800);
const KEY = pem("PRIVATE KEY", 138);
// Backend params made of allow-listed lines (vetted as the generator vets them), up to the bytes asked per backend.
function paramsOf(bytes) {
  const lines = ["timeout server 30s", "balance roundrobin"];
  let size = lines.join("\n").length;
  for (let i = 0; size < bytes; i++) {
    const line = "http-request set-header X-Bench-" + i + " value-" + i;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

const tables = { projects: [], backends: [], containers: [], hosts: [], backend_containers: [], domains: [], certificates: [] };
const hex = (n) => n.toString(16);
for (let p = 1; p <= shape.projects; p++) tables.projects.push({ id: p, label: "p" + p, fullname: "Project " + p, version: 0, revision: 3 });
for (let h = 1; h <= 20; h++) tables.hosts.push({ id: h, hostname: "node" + h + ".hosts.example", ipv6: "2001:db8:1::" + hex(h), version: 0 });
const params = paramsOf(shape.paramsBytesPerBackend);
let containerId = 0;
for (let b = 1; b <= shape.backends; b++) {
  const projectId = 1 + (b % shape.projects);
  tables.backends.push({ id: b, project_id: projectId, label: "b" + b, fullname: null, port: 8080, params, version: 2 });
  const servers = shape.serversPerBackend + (b <= shape.extraServers ? 1 : 0);
  for (let s = 0; s < servers; s++) {
    const id = ++containerId;
    tables.containers.push({ id, project_id: projectId, label: "c" + id, fullname: null, host_id: 1 + (id % 20), ipv6: "2001:db8:2::" + hex(id), version: 1 });
    tables.backend_containers.push({ id, backend_id: b, container_id: id, params: s % 2 ? null : "check inter 5s", version: 0 });
  }
}
for (let d = 1; d <= shape.domains; d++) {
  const backendId = 1 + (d % shape.backends);
  const name = "www" + d + ".site" + backendId + ".example";
  const acme = d <= shape.certificates;
  tables.domains.push({ id: d, domain_name: name, backend_id: backendId, public_ca_certificate: acme ? 1 : 0, cert_provided: 0, redirect_to_url: null, version: 0, reversed_name: name.split(".").reverse().join(".") });
  if (acme) tables.certificates.push({ id: d + 1, name: "acme_" + name, source: "acme", domain_names: JSON.stringify([name]), issuer: "C=US, O=Let's Encrypt, CN=E6", serial_number: "04" + hex(d).padStart(34, "0"), not_before: 1767225600000, not_after: 1774998000000, certificate_pem: CHAIN, private_key_pem: KEY, project_ids: null, updated_at: 1767225600000 });
}
tables.certificates.push({ id: 1, name: "fallback", source: "fallback", domain_names: '["fallback.invalid"]', issuer: "CN=fallback.invalid", serial_number: "01", not_before: 1767225600000, not_after: 2082758400000, certificate_pem: pem("CERTIFICATE", 400), private_key_pem: KEY, project_ids: null, updated_at: 1767225600000 });
// What D1 would send: the rows as JSON text, parsed afresh for every answer (outside the measured heap until then).
const wire = Object.fromEntries(Object.entries(tables).map(([name, rows]) => [name, JSON.stringify(rows)]));
for (const name of Object.keys(tables)) tables[name] = undefined;

const tableOf = (sql) => /from "([a-z_]+)"/.exec(sql)[1];
const statement = (sql) => ({
  sql,
  bind() { return this; },
  async all() { return { results: JSON.parse(wire[tableOf(sql)]) }; },
  async raw() {
    const columns = [...sql.slice(0, sql.indexOf(" from ")).matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);
    return JSON.parse(wire[tableOf(sql)]).map((row) => columns.map((column) => row[column]));
  },
});
const d1 = {
  prepare: statement,
  async batch(statements) { return Promise.all(statements.map((s) => s.all())); },
};
const db = drizzle(d1);
const settings = { httpPort: 80, httpsPort: 443, bindAddress: "::", httpsRedirectCode: 301, acmeBackendUrl: "https://cp.example.net" };

const live = () => { globalThis.gc(); globalThis.gc(); const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };
const start = live();
const kept = {};
const stages = {};
let last = start;
const stage = (name) => { const now = live(); stages[name] = now - last; last = now; };
kept.installation = await loadInstallation(db); stage("rows");
kept.certificates = await listCertificates(db); stage("certificateRows");
kept.bundle = generateHaproxyBundle(kept.installation, kept.certificates, settings); stage("bundle");
kept.files = bundleFiles(kept.bundle); stage("files");
// bundleDigest's own text (every file, as it hashes them) lives while it runs: counted here.
kept.digestText = Object.keys(kept.files).sort().map((n) => n + "\n" + kept.files[n].length + "\n" + kept.files[n]).join("\n");
kept.digest = await bundleDigest(kept.files); stage("digest");
// storeVersion sends every file as a statement parameter: one more copy in D1's request.
kept.stored = JSON.stringify(Object.entries(kept.bundle.files)); stage("storedVersion");
kept.body = JSON.stringify({ version: 1, digest: kept.digest, files: kept.files, onlyIfNewer: false }); stage("agentBody");
const fileBytes = Object.values(kept.files).reduce((sum, text) => sum + text.length, 0);
console.log(JSON.stringify({ total: last - start, stages, fileBytes, warnings: kept.bundle.warnings.length }));
`;

function measure(modulePath, childPath, shape) {
  const runs = [];
  for (let round = 0; round < ROUNDS; round++) {
    const child = spawnSync(process.execPath, ["--expose-gc", childPath, modulePath, JSON.stringify(shape)], {
      encoding: "utf8",
      maxBuffer: 16 * MIB,
    });
    if (child.status !== 0) throw new Error(`measurement failed (${JSON.stringify(shape)}):\n${child.stderr}`);
    runs.push(JSON.parse(child.stdout.trim().split("\n").pop()));
  }
  const total = median(runs.map((run) => run.total));
  return { ...runs.find((run) => run.total === total), shape };
}

const BASE = {
  projects: 10,
  backends: 1000,
  serversPerBackend: 2,
  extraServers: 0,
  domains: 10_000,
  certificates: 0,
  paramsBytesPerBackend: 100,
};
/** One step along each dimension from the base, and the unit its cost is given per. */
const STEPS = [
  {
    dimension: "backend (with one server)",
    unit: 1000,
    change: { backends: 2000, serversPerBackend: 1, extraServers: 1000 },
  },
  { dimension: "server (container link)", unit: 1000, change: { extraServers: 1000 } },
  { dimension: "domain", unit: 10_000, change: { domains: 20_000 } },
  { dimension: "certificate (ACME, with its domain's)", unit: 5000, change: { certificates: 5000 } },
  { dimension: "params byte", unit: 1000 * 900, change: { paramsBytesPerBackend: 1000 } },
];

const dir = mkdtempSync(path.join(tmpdir(), "bench-generation-memory-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
const modulePath = await bundleModules(dir);
const childPath = path.join(dir, "measure.mjs");
writeFileSync(childPath, CHILD);

const mib = (bytes) => (bytes / MIB).toFixed(1);
const base = measure(modulePath, childPath, BASE);
console.log(`base: ${JSON.stringify(BASE)}`);
console.log(`  live heap at the peak ${mib(base.total)} MiB (files ${mib(base.fileBytes)} MiB); by stage (MiB):`);
console.log(
  `  ${Object.entries(base.stages)
    .map(([name, bytes]) => `${name} ${mib(bytes)}`)
    .join(", ")}`,
);
console.log("\ncost per unit (difference to the base, bytes):");
const costs = {};
for (const step of STEPS) {
  const point = measure(modulePath, childPath, { ...BASE, ...step.change });
  // A backend's step replaces the base's second server of each backend by a backend of its own.
  const perUnit = (point.total - base.total) / step.unit;
  costs[step.dimension] = perUnit;
  console.log(
    `  ${step.dimension.padEnd(40)} ${perUnit.toFixed(0).padStart(7)} B  (${mib(point.total)} MiB at ${JSON.stringify(step.change)})`,
  );
}
const backendOnly = costs["backend (with one server)"];
console.log(`\n  a backend alone (less its server): ${(backendOnly - costs["server (container link)"]).toFixed(0)} B`);

/**
 * The installation-wide bounds (the defaults of PROXY_MAX_INSTALLATION_*, or BOUND_* to try others), and the heap an
 * installation holding all of them at once needs: the figure the defaults are chosen by (at most half of 128 MiB).
 */
const BOUNDS = {
  backends: Number(process.env.BOUND_BACKENDS ?? 4000),
  servers: Number(process.env.BOUND_SERVERS ?? 8000),
  domains: Number(process.env.BOUND_DOMAINS ?? 20_000),
  publicCaDomains: Number(process.env.BOUND_PUBLIC_CA_DOMAINS ?? 3000),
  paramsBytes: Number(process.env.BOUND_PARAMS_BYTES ?? 2 * MIB),
};
const worst = measure(modulePath, childPath, {
  projects: 100,
  backends: BOUNDS.backends,
  serversPerBackend: Math.floor(BOUNDS.servers / BOUNDS.backends),
  extraServers: BOUNDS.servers % BOUNDS.backends,
  domains: BOUNDS.domains,
  certificates: BOUNDS.publicCaDomains,
  // Server params count too: the base's "check inter 5s" on every other server.
  paramsBytesPerBackend: Math.floor((BOUNDS.paramsBytes - (BOUNDS.servers / 2) * 14) / BOUNDS.backends),
});
console.log(`\nevery bound reached at once ${JSON.stringify(BOUNDS)}:`);
console.log(
  `  live heap at the peak ${mib(worst.total)} MiB of the Worker's 128 MiB (files ${mib(worst.fileBytes)} MiB)`,
);
console.log(
  `  ${Object.entries(worst.stages)
    .map(([name, bytes]) => `${name} ${mib(bytes)}`)
    .join(", ")}`,
);
