// The tenants' part of haproxy.cfg: one backend section per backend with containers, the routing map lines of every
// backend, and the redirect maps of the global redirect backends. Pure: it takes the installation's rows.
import { vetTargetAddress } from "../installation/addresses";
import { type BackendParams, vetBackendParams, vetServerParams } from "../haproxy-params/index";
import { invalidRedirect, isValidRedirectUrl, redirectPrefix } from "../installation/redirects";
import type { BackendRow, Installation } from "../installation/rows";
import { backendFqLabel, containerFqLabel, GLOBAL_BACKEND_LABELS } from "../installation/views";
import { MAINTENANCE_LINES, UNAVAILABLE_BACKEND, type HaproxySettings } from "./config-frame";

/** A warning of the generation, with the project it is about (null: about the installation as a whole). */
export interface BundleNote {
  project: string | null;
  text: string;
}

export interface BundleProblem {
  project: string;
  backend: string;
  /**
   * params: the backend's params were refused and left out; server-params: a server's params were; server-address:
   * a server was left out for its address; certificate: a domain asks for a certificate none covers (http only);
   * excluded: the load balancer refused the backend's section, so the backend was left out and its domains answer 503.
   */
  kind: "params" | "server-params" | "server-address" | "certificate" | "excluded";
  message: string;
}

/** A tenant backend's section of haproxy.cfg, before it is placed in the file. */
export interface BackendSection {
  backendId: number;
  project: string;
  backend: string;
  /** The section's name in haproxy.cfg. */
  fqLabel: string;
  lines: string[];
}

/** A bundle that must not reach a load balancer: the message says why. */
export class InvalidConfiguration extends Error {
  override name = "InvalidConfiguration";
}

export const HOST_NAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

/** Where a generation's warnings and problems go. */
export interface Report {
  note(project: string | null, text: string): void;
  problem(problem: BundleProblem): void;
}

/** Vetting is pure and most backends share a few params texts: each distinct text is vetted once per generation. */
function onceEach<T>(vet: (text: string | null) => T): (text: string | null) => T {
  const seen = new Map<string | null, T>();
  return (text) => {
    if (!seen.has(text)) seen.set(text, vet(text));
    return seen.get(text)!;
  };
}

/** onceEach for server params, which are vetted with the TLS settings their backend's default-server sets. */
function onceEachServer(vet: typeof vetServerParams) {
  const byBounds = new Map<string, (text: string | null) => ReturnType<typeof vetServerParams>>();
  return (text: string | null, backend: BackendParams) => {
    const { min, max, checkAlpn } = backend.serverTls;
    const key = `${min}/${max}/${checkAlpn === true}`;
    let vetOnce = byBounds.get(key);
    if (!vetOnce) byBounds.set(key, (vetOnce = onceEach((params) => vet(params, backend))));
    return vetOnce(text);
  };
}

function groupBy<T>(rows: readonly T[], key: (row: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const row of rows) {
    const list = groups.get(key(row));
    if (list) list.push(row);
    else groups.set(key(row), [row]);
  }
  return groups;
}

export interface TenantPart {
  sections: BackendSection[];
  /** domain2backend.map lines, grouped under a comment per backend. */
  routing: string[];
  redirects: [string, string][];
  prefixes: [string, string][];
  /** Whether some backend's domains are routed to UNAVAILABLE_BACKEND, which must then be written. */
  unavailable: boolean;
}

interface Context {
  part: TenantPart;
  report: Report;
  excluded: ReadonlyMap<number, string>;
  certificateOf: ReadonlyMap<string, unknown>;
  referencesOf: Map<number, Reference[]>;
  domainsOf: Map<number, Installation["domains"]>;
  vetBackend: (params: string | null) => ReturnType<typeof vetBackendParams>;
  servers: ReturnType<typeof serverLines>;
}

/**
 * Renders every backend; `certificateOf` tells which domains have a certificate. `excluded` names backends the load
 * balancer refused (by id, with its reason): they get no section and their domains are routed to the 503 backend, so
 * that one tenant's refused section never keeps the others from being deployed.
 */
export function tenantBackends(
  installation: Installation,
  settings: HaproxySettings,
  covered: { excluded: ReadonlyMap<number, string>; certificateOf: ReadonlyMap<string, unknown> },
  report: Report,
): TenantPart {
  for (const domain of installation.domains) {
    if (!HOST_NAME.test(domain.domainName))
      throw new InvalidConfiguration(`domain ${JSON.stringify(domain.domainName)} is not a host name`);
  }
  const context: Context = {
    ...covered,
    part: { sections: [], routing: [], redirects: [], prefixes: [], unavailable: false },
    report,
    referencesOf: groupBy(installation.backendContainers, (row) => row.backendId),
    domainsOf: groupBy(installation.domains, (row) => row.backendId),
    vetBackend: onceEach((params) => vetBackendParams(params, settings.paramsExtraDirectives)),
    servers: serverLines(installation, settings, onceEachServer(vetServerParams), report),
  };
  const projectLabel = new Map(installation.projects.map((row) => [row.id, row.label]));
  for (const backend of installation.backends) renderBackend(context, backend, projectLabel.get(backend.projectId)!);
  return context.part;
}

/** One backend: its section (if it has one), its routing lines, and the certificates its domains miss. */
function renderBackend(context: Context, backend: BackendRow, project: string): void {
  const { part, report } = context;
  const fqLabel = backendFqLabel(project, backend.id, backend.label);
  const where = `backend ${fqLabel}`;
  const backendDomains = context.domainsOf.get(backend.id) ?? [];
  const references = context.referencesOf.get(backend.id) ?? [];
  const problem = (kind: BundleProblem["kind"], message: string) => {
    report.note(project, `WARN: ${message}`);
    report.problem({ project, backend: backend.label, kind, message });
  };
  let routed: string[] = [];
  if (GLOBAL_BACKEND_LABELS.has(backend.label)) {
    routed = redirectRouting(backend, backendDomains, where, part, (text) => report.note(project, text));
  } else if (references.length === 0) {
    if (backendDomains.length > 0) {
      const names = backendDomains.map((d) => d.domainName).join(", ");
      report.note(project, `WARN: ${where} has no containers: its domains are not routed (${names})`);
    }
  } else {
    const section = tenantSection(context, { backend, project, fqLabel, where, references, problem });
    if (section)
      part.sections.push({ backendId: backend.id, project, backend: backend.label, fqLabel, lines: section });
    else part.unavailable = true;
    routed = backendDomains.map((domain) => `${domain.domainName} ${section ? fqLabel : UNAVAILABLE_BACKEND}`);
  }
  if (routed.length > 0) part.routing.push(`# ${project}: ${backend.label}`, ...routed);
  // A warning too, as every problem is (issue 28): the usual state of a new domain until the CA issues its
  // certificate, but also that of a domain whose certificate never comes, which nobody would hear of otherwise.
  for (const domain of backendDomains) {
    if (context.certificateOf.has(domain.domainName) || !(domain.publicCaCertificate || domain.certProvided)) continue;
    problem(
      "certificate",
      `${domain.domainName} (${where}) asks for a ${domain.certProvided ? "provided" : "public CA"} certificate, but none covers it: it is served over http only`,
    );
  }
}

/**
 * A tenant backend's section lines; undefined when it is left out (its domains answer 503): the load balancer refused
 * it, or its stored params fail the vetting (a row stored before it). Written without them, a backend whose params
 * held its access rules (`http-request deny unless ...`) would open to everybody.
 */
function tenantSection(
  context: Context,
  of: {
    backend: BackendRow;
    project: string;
    fqLabel: string;
    where: string;
    references: Reference[];
    problem: (kind: BundleProblem["kind"], message: string) => void;
  },
): string[] | undefined {
  const { backend, project, where, problem } = of;
  const refused = context.excluded.get(backend.id);
  if (refused !== undefined) {
    problem("excluded", `${where} is left out: the load balancer refused it (${refused}); its domains answer 503`);
    return undefined;
  }
  const vetted = context.vetBackend(backend.params);
  if (!vetted.ok) {
    const { line, reason } = vetted.error;
    problem("params", `${where} is left out: params line ${line} refused (${reason}); its domains answer 503`);
    return undefined;
  }
  const params = vetted.value;
  const section = [`# project ${project}: backend ${backend.label}`, `backend ${of.fqLabel}`];
  if (params.maintenance) return [...section, ...MAINTENANCE_LINES];
  for (const line of params.lines) section.push(`    ${line}`);
  const servers = of.references.flatMap((reference) => context.servers(reference, { project, backend, where, params }));
  return [...section, ...servers.sort()];
}

/** The map lines of a global redirect (or no-content) backend's domains; their targets go to the redirect maps. */
function redirectRouting(
  backend: BackendRow,
  backendDomains: Installation["domains"],
  where: string,
  part: TenantPart,
  warn: (text: string) => void,
): string[] {
  const routed: string[] = [];
  for (const domain of backendDomains) {
    if (backend.label === "nocontent") {
      routed.push(`${domain.domainName} nocontent`);
      continue;
    }
    const url = domain.redirectToUrl;
    if (!url) {
      warn(`WARN: ${domain.domainName} (${where}) has no redirectToUrl and is not routed`);
      continue;
    }
    if (!isValidRedirectUrl(url)) throw new InvalidConfiguration(invalidRedirect(domain.domainName, url));
    const permanent = backend.label === "permredirect";
    if (url.endsWith("*")) {
      routed.push(`${domain.domainName} ${permanent ? "permprefix" : "tempprefix"}`);
      part.prefixes.push([domain.domainName, redirectPrefix(url)]);
    } else {
      routed.push(`${domain.domainName} ${permanent ? "permredirect" : "tempredirect"}`);
      part.redirects.push([domain.domainName, url]);
    }
  }
  return routed;
}

type Reference = Installation["backendContainers"][number];

/** A server line of a backend section, its vetted params last. */
export const serverLine = (name: string, address: string, port: number, params: string) =>
  `    server ${name} [${address}]:${port}${params ? ` ${params}` : ""}`;

/** Renders one container reference as a server line (or none, when its address may not be connected to). */
function serverLines(
  installation: Installation,
  settings: HaproxySettings,
  vetServer: (params: string | null, backend: BackendParams) => ReturnType<typeof vetServerParams>,
  report: Report,
) {
  const hostById = new Map(installation.hosts.map((row) => [row.id, row]));
  const containerById = new Map(installation.containers.map((row) => [row.id, row]));
  return (
    reference: Reference,
    of: { project: string; backend: BackendRow; where: string; params: BackendParams },
  ): string[] => {
    const { project, backend, where } = of;
    const problem = (kind: BundleProblem["kind"], message: string) => {
      report.note(project, `WARN: ${message}`);
      report.problem({ project, backend: backend.label, kind, message });
    };
    const container = containerById.get(reference.containerId)!;
    const host = hostById.get(container.hostId)!;
    if (!HOST_NAME.test(host.hostname))
      throw new InvalidConfiguration(`${where}: host ${JSON.stringify(host.hostname)} is not a host name`);
    const name = `${host.hostname}_${containerFqLabel(project, container.label)}`;
    // Stored before addresses were vetted (or written past the API): HAProxy must not connect there, nor to a host.
    const address = vetTargetAddress(container.ipv6, installation.hosts, settings.addressExceptions);
    if (!address.ok) {
      problem("server-address", `${where}: server ${name} is left out: its address ${container.ipv6} ${address.error}`);
      return [];
    }
    // Written after the backend's params, whose default-server lines it inherits: they are vetted together.
    const vetted = vetServer(reference.params, of.params);
    if (!vetted.ok) {
      // Without them the server would lose its TLS options, and the backend's traffic to it its encryption.
      const { line, reason } = vetted.error;
      problem("server-params", `${where}: server ${name} is left out: its params line ${line} refused (${reason})`);
      return [];
    }
    return [serverLine(name, address.value, backend.port, vetted.value)];
  };
}
