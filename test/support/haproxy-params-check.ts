// Backend and server params written as the generator writes them (src/proxy/haproxy/config.ts: one backend each,
// after the generated global, defaults and frontends, its server line with the generated prefix) and checked by a
// real `haproxy -c`; a refused batch is bisected down to the params haproxy refuses.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { bundleFiles, generateHaproxyBundle } from "../../src/proxy/haproxy/config";
import type { Installation } from "../../src/proxy/installation/rows";
import { containerRow, fallbackCertificateRow } from "./proxy-rows";
import { root, tempDir } from "./proxy-haproxy-agent";

/** One backend's params and the params of its one container link. */
export interface Form {
  params: string;
  server?: string;
}

const fixture = (name: string) => readFileSync(path.join(root, "test", "proxy", "fixtures", name), "utf8");
const fallback = () => fallbackCertificateRow(fixture("provided-rsa.cert.pem"), fixture("provided-rsa.key.pem"));

/** An installation of one project with one backend per form, each with one server carrying the form's server params. */
export function installationOf(forms: Form[]): Installation {
  return {
    projects: [{ id: 1, label: "forms", fullname: null, version: 0, revision: 0 }],
    backends: forms.map((form, i) => ({
      id: i + 1,
      projectId: 1,
      label: `f${i + 1}`,
      fullname: null,
      port: 8080,
      params: form.params,
      version: 0,
    })),
    domains: [],
    backendContainers: forms.map((form, i) => ({
      id: i + 1,
      backendId: i + 1,
      containerId: i + 1,
      params: form.server ?? null,
      version: 0,
    })),
    containers: forms.map((_, i) => containerRow(i + 1, `c${i + 1}`, `2001:db8::${(i + 1).toString(16)}`)),
    // Apart from every container's address: a server at a host's address would be left out.
    hosts: [{ id: 1, hostname: "node1.example.net", ipv6: "2001:db8:ffff::1", version: 0 }],
  };
}

export interface CheckResult {
  status: number | null;
  output: string;
  warnings: string[];
  config: string;
}

/** Generates the bundle of these forms, writes it to a fresh directory and runs `haproxy -c` on it. */
export function checkForms(forms: Form[], edit = (config: string) => config): CheckResult {
  const bundle = generateHaproxyBundle(installationOf(forms), [fallback()], {
    httpPort: 18080,
    httpsPort: 18443,
    bindAddress: "127.0.0.1",
    httpsRedirectCode: 301,
    acmeBackendUrl: "http://127.0.0.1:8787",
  });
  const dir = tempDir("haproxy-params");
  try {
    mkdirSync(path.join(dir, "certs"));
    bundle.files["haproxy.cfg"] = edit(bundle.files["haproxy.cfg"]);
    for (const [name, text] of Object.entries(bundleFiles(bundle))) writeFileSync(path.join(dir, name), text);
    const result = spawnSync("haproxy", ["-c", "-f", path.join(dir, "haproxy.cfg")], { encoding: "utf8" });
    const output = `${result.stdout}${result.stderr}`;
    return { status: result.status, output, warnings: bundle.warnings, config: bundle.files["haproxy.cfg"] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Checks params lines written as they are, past the vetter (as rows stored before it exist): the generator's file with
 * these lines in the one backend's section.
 */
export function checkRawLines(params: string): CheckResult {
  const section = "\nbackend forms_1_f1\n";
  const lines = params
    .split("\n")
    .map((line) => `    ${line}\n`)
    .join("");
  return checkForms([{ params: "" }], (config) => config.replace(section, `${section}${lines}`));
}

/** haproxy -c accepted the file: no alert, no warning of the generator, and only "no listener" as a reason not to start. */
export const passed = (result: CheckResult) =>
  !result.output.includes("[ALERT]") && result.warnings.length === 0 && (result.status === 0 || result.status === 2);

/**
 * Checks the forms in one haproxy run; when it fails, halves the batch until one form fails alone, and returns it with
 * haproxy's output (undefined when the whole batch passes).
 */
export function firstRefused(forms: Form[]): { form: Form; result: CheckResult } | undefined {
  let batch = forms;
  let result = checkForms(batch);
  if (passed(result)) return undefined;
  while (batch.length > 1) {
    const half = batch.slice(0, Math.ceil(batch.length / 2));
    const halfResult = checkForms(half);
    if (!passed(halfResult)) {
      batch = half;
      result = halfResult;
    } else {
      batch = batch.slice(half.length);
      result = checkForms(batch);
      // Refused together only (which the one-backend-each layout should not allow): name the whole rest.
      if (passed(result)) return { form: { params: batch.map((form) => form.params).join("\n---\n") }, result };
    }
  }
  return { form: batch[0], result };
}
