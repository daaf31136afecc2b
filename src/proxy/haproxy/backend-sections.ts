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
    part: { sections: [], routing: [], redirects: [], prefixes: [] },
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
  } else if (context.excluded.has(backend.id)) {
    const reason = context.excluded.get(backend.id);
    problem("excluded", `${where} is left out: the load balancer refused it (${reason}); its domains answer 503`);
    routed = backendDomains.map((domain) => `${domain.domainName} ${UNAVAILABLE_BACKEND}`);
  } else {
    const params = backendParams(backend.params, where, context.vetBackend, (message) => problem("params", message));
    const section = [`# project ${project}: backend ${backend.label}`, `backend ${fqLabel}`];
    if (params.maintenance) section.push(...MAINTENANCE_LINES);
    else {
      for (const line of params.lines) section.push(`    ${line}`);
      section.push(
        ...references.flatMap((reference) => context.servers(reference, { project, backend, where, params })).sort(),
      );
    }
    part.sections.push({ backendId: backend.id, project, backend: backend.label, fqLabel, lines: section });
    routed = backendDomains.map((domain) => `${domain.domainName} ${fqLabel}`);
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

/**
 * The backend's params as vetted lines. Rows stored before params were vetted may hold lines the vetting refuses: the
 * backend is then written without its params (one tenant never breaks the file for all) and a warning says why; a
 * `_maintenance` line still puts it in maintenance.
 */
function backendParams(
  params: string | null,
  where: string,
  vet: (params: string | null) => ReturnType<typeof vetBackendParams>,
  report: (message: string) => void,
): BackendParams {
  const vetted = vet(params);
  if (vetted.ok) return vetted.value;
  const { line, reason } = vetted.error;
  report(`${where}: params line ${line} refused (${reason}); the backend is written without its params`);
  const maintenance = (params ?? "").split(/\r?\n/).some((text) => text.trim() === "_maintenance");
  return { lines: [], maintenance, serverTls: {} };
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
      const { line, reason } = vetted.error;
      problem(
        "server-params",
        `${where}: params of server ${name} line ${line} refused (${reason}); the server is written without them`,
      );
    }
    return [serverLine(name, address.value, backend.port, vetted.ok ? vetted.value : "")];
  };
}
