// Generates the HAProxy bundle from the installation: haproxy.cfg, the four maps, the crt-list and the certificate
// files, checked structurally before anything leaves the Worker. A pure function of its input: the same database
// gives the same bytes (no timestamps, every list sorted). Each tenant backend's place in haproxy.cfg is returned,
// so that what the load balancer refuses can be traced to the backend it came from and that backend left out
// (haproxy/isolation.ts).
import { sha256Hex } from "../../shared/bytes";
import type { Installation } from "../installation/rows";
import type { CertificateRow } from "../pki/rows";
import { certificateFile, combinedPem, selectCertificates } from "../pki/selection";
import {
  InvalidConfiguration,
  tenantBackends,
  type BundleNote,
  type BundleProblem,
  type Report,
} from "./backend-sections";
import { configFrame, CRT_LIST_FILE, type HaproxySettings } from "./config-frame";
import { checkCrtList, crtListLines } from "./crt-list";

export { InvalidConfiguration, type BundleNote, type BundleProblem } from "./backend-sections";
export type { HaproxySettings } from "./config-frame";

/** Where a tenant backend's section is in haproxy.cfg: its first and last line (1-based, as HAProxy counts). */
export interface SectionPlace {
  backendId: number;
  project: string;
  backend: string;
  fqLabel: string;
  firstLine: number;
  lastLine: number;
}

export interface HaproxyBundle {
  /** haproxy.cfg, the maps and the crt-list: text files stored with the version. */
  files: Record<string, string>;
  /** The certificate files (chain and key), each from a certificate row. */
  certificates: { file: string; row: CertificateRow }[];
  warnings: string[];
  /** The warnings with the project each is about, so that a tenant is shown only its own. */
  notes: BundleNote[];
  /** The backends, servers and certificates left out of what was asked, each with why. */
  problems: BundleProblem[];
  sections: SectionPlace[];
}

export const MAP_FILES = ["domain2backend.map", "domain2redirect.map", "domain2prefix.map", "domain2cert.map"] as const;

const CONTROL_CHARACTERS = /[\x00-\x08\x0a-\x1f\x7f]/;

/**
 * Generates the bundle; throws InvalidConfiguration when the data cannot make a safe configuration. `excluded` names
 * the backends to leave out (by id, with the load balancer's reason). Four phases: index the installation, write
 * the tenant sections, place them in the haproxy.cfg template, then write the maps; the whole is checked last.
 */
export function generateHaproxyBundle(
  installation: Installation,
  certificateRows: CertificateRow[],
  settings: HaproxySettings,
  excluded: ReadonlyMap<number, string> = new Map(),
): HaproxyBundle {
  const index = indexInstallation(installation, certificateRows);
  const { notes, problems, report } = collector();
  const tenants = tenantBackends(installation, settings, { excluded, certificateOf: index.certificateOf }, report);
  const { config, sections } = renderConfig(settings, excluded.size > 0 || tenants.unavailable, tenants.sections);
  const files: Record<string, string> = { "haproxy.cfg": config, ...renderMaps(installation, index, tenants) };
  // Only the certificates that serve a domain: no other is in the crt-list, so HAProxy would never present it.
  const certificates = [index.fallback, ...servingCertificates(index.certificateOf)].map((row) => ({
    file: certificateFile(row),
    row,
  }));
  checkBundle(files);
  checkCrtList(files[CRT_LIST_FILE], new Set(certificates.map(({ file }) => file)));
  return {
    files,
    certificates,
    warnings: notes.map((note) => note.text),
    notes,
    problems,
    sections,
  };
}

/** What the phases look up: the certificate serving each domain, and the fallback one. */
interface BundleIndex {
  certificateOf: ReadonlyMap<string, CertificateRow>;
  fallback: CertificateRow;
}

function indexInstallation(installation: Installation, certificateRows: CertificateRow[]): BundleIndex {
  const projectOfBackend = new Map(installation.backends.map((row) => [row.id, row.projectId]));
  const { byDomain: certificateOf } = selectCertificates(certificateRows, installation.domains, (domain) =>
    projectOfBackend.get(domain.backendId),
  );
  const fallback = certificateRows.find((row) => row.source === "fallback");
  if (!fallback) throw new InvalidConfiguration("the fallback certificate is missing");
  return { certificateOf, fallback };
}

/** Where the tenant sections put their notes and problems, in the order they were reported. */
function collector() {
  const notes: BundleNote[] = [];
  const problems: BundleProblem[] = [];
  const report: Report = {
    note: (project, text) => notes.push({ project, text }),
    problem: (problem) => problems.push(problem),
  };
  return { notes, problems, report };
}

type Tenants = ReturnType<typeof tenantBackends>;

/** haproxy.cfg: the fixed frame, then each tenant section after a blank line, with the lines it landed on. */
function renderConfig(settings: HaproxySettings, someExcluded: boolean, tenantSections: Tenants["sections"]) {
  const lines = configFrame(settings, someExcluded);
  const sections: SectionPlace[] = [];
  for (const { lines: section, ...backend } of tenantSections) {
    lines.push("");
    sections.push({ ...backend, firstLine: lines.length + 1, lastLine: lines.length + section.length });
    lines.push(...section);
  }
  lines.push("");
  return { config: lines.join("\n"), sections };
}

/** The four maps and the crt-list, each with its header. */
function renderMaps(installation: Installation, index: BundleIndex, tenants: Tenants): Record<string, string> {
  const { certificateOf } = index;
  const certificateMap = installation.domains
    .filter((domain) => certificateOf.has(domain.domainName))
    .map((domain) => `${domain.domainName} ${certificateFile(certificateOf.get(domain.domainName)!)}`);
  const mapText = (header: string, mapLines: string[]) =>
    [`# ${header} (generated, DO NOT EDIT)`, ...mapLines, ""].join("\n");
  const pairs = (entries: [string, string][]) =>
    entries.sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([key, value]) => `${key} ${value}`);
  return {
    "domain2backend.map": mapText("host name -> backend", tenants.routing),
    "domain2redirect.map": mapText("host name -> redirect URL", pairs(tenants.redirects)),
    "domain2prefix.map": mapText("host name -> redirect prefix", pairs(tenants.prefixes)),
    "domain2cert.map": mapText("host name -> certificate file (https redirect)", certificateMap),
    [CRT_LIST_FILE]: mapText("certificate file, then the host names it is offered for", crtListLines(certificateOf)),
  };
}

/** Each certificate that serves at least one domain, once, by name. */
const servingCertificates = (certificateOf: ReadonlyMap<string, CertificateRow>) =>
  [...new Set(certificateOf.values())].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

/** Last checks over the generated text: one directive per line, map values without blanks, known backends. */
function checkBundle(files: Record<string, string>): void {
  const config = files["haproxy.cfg"];
  const defined = new Set([...config.matchAll(/^backend (\S+)$/gm)].map((match) => match[1]));
  for (const name of MAP_FILES) {
    for (const line of files[name].split("\n")) {
      if (!line || line.startsWith("#")) continue;
      const fields = line.split(" ");
      if (fields.length !== 2 || CONTROL_CHARACTERS.test(line))
        throw new InvalidConfiguration(`${name}: malformed line ${JSON.stringify(line)}`);
      if (name === "domain2backend.map" && !defined.has(fields[1])) {
        throw new InvalidConfiguration(`${name}: ${fields[0]} refers to the undefined backend ${fields[1]}`);
      }
    }
  }
  for (const line of config.split("\n")) {
    if (CONTROL_CHARACTERS.test(line))
      throw new InvalidConfiguration("haproxy.cfg: a line contains a control character");
  }
}

/** What the bundle's files contain, as bytes per path (certificates as HAProxy loads them). */
export function bundleFiles(bundle: HaproxyBundle): Record<string, string> {
  const result: Record<string, string> = { ...bundle.files };
  for (const { file, row } of bundle.certificates) result[file] = combinedPem(row);
  return result;
}

/** sha256 over every path and content, in path order. */
export async function bundleDigest(files: Record<string, string>): Promise<string> {
  const text = Object.keys(files)
    .sort()
    .map((name) => `${name}\n${files[name].length}\n${files[name]}`)
    .join("\n");
  return `sha256:${await sha256Hex(text)}`;
}
