// Generates the HAProxy bundle from the installation: haproxy.cfg, the four maps and the certificate files, checked
// structurally before anything leaves the Worker. A pure function of its input: the same database gives the same
// bytes (no timestamps, every list sorted).
import { sha256Hex } from "../../shared/bytes";
import { vetTargetAddress, type Ipv6Network } from "../installation/addresses";
import { vetBackendParams, vetServerParams } from "../installation/params/index";
import { invalidRedirect, isValidRedirectUrl, redirectPrefix } from "../installation/redirects";
import type { Installation } from "../installation/rows";
import type { CertificateRow } from "../pki/rows";
import { certificateFile, combinedPem, selectCertificates } from "../pki/selection";
import { backendFqLabel, containerFqLabel, GLOBAL_BACKEND_LABELS } from "../installation/views";

export interface HaproxySettings {
  httpPort: number;
  httpsPort: number;
  bindAddress: string;
  httpsRedirectCode: number;
  /** Origin the HTTP-01 challenge requests go to (this control plane); undefined: none. */
  acmeBackendUrl?: string;
  /** Directives backend params may use besides the built-in allow-list (HAPROXY_PARAMS_EXTRA_DIRECTIVES). */
  paramsExtraDirectives?: readonly string[];
  /** Networks the installation accepts container addresses in although they would be refused (PROXY_ADDRESS_EXCEPTIONS). */
  addressExceptions?: readonly Ipv6Network[];
}

export interface HaproxyBundle {
  /** haproxy.cfg and the maps: text files stored with the version. */
  files: Record<string, string>;
  /** The certificate files (chain and key), each from a certificate row. */
  certificates: { file: string; row: CertificateRow }[];
  warnings: string[];
  /** The backends written without part of what was asked (params, servers, a certificate): also among the warnings. */
  problems: BundleProblem[];
}

export interface BundleProblem {
  project: string;
  backend: string;
  /**
   * params: the backend's params were refused and left out; server-params: a server's params were; server-address:
   * a server was left out for its address; certificate: a domain asks for a certificate none covers (http only).
   */
  kind: "params" | "server-params" | "server-address" | "certificate";
  message: string;
}

/** A bundle that must not reach a load balancer: the message says why. */
export class InvalidConfiguration extends Error {
  override name = "InvalidConfiguration";
}

export const MAP_FILES = ["domain2backend.map", "domain2redirect.map", "domain2prefix.map", "domain2cert.map"] as const;

const CONTROL_CHARACTERS = /[\x00-\x08\x0a-\x1f\x7f]/;
const HOST_NAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

const MAINTENANCE_PAGE =
  "<!DOCTYPE html><html><head><title>Maintenance</title></head><body><h1>Down for maintenance</h1>" +
  "<p>This site is being updated and will be back shortly.</p></body></html>";

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
) {
  const vetted = vet(params);
  if (vetted.ok) return vetted.value;
  const { line, reason } = vetted.error;
  report(`${where}: params line ${line} refused (${reason}); the backend is written without its params`);
  return { lines: [], maintenance: (params ?? "").split(/\r?\n/).some((text) => text.trim() === "_maintenance") };
}

/** Vetting is pure and most backends share a few params texts: each distinct text is vetted once per generation. */
function onceEach<T>(vet: (text: string | null) => T): (text: string | null) => T {
  const seen = new Map<string | null, T>();
  return (text) => {
    if (!seen.has(text)) seen.set(text, vet(text));
    return seen.get(text)!;
  };
}

function bindLine(settings: HaproxySettings, port: number, extra = ""): string {
  const address = settings.bindAddress.includes(":") ? `[${settings.bindAddress}]` : settings.bindAddress;
  const dualStack = settings.bindAddress === "::" ? " v4v6" : "";
  return `    bind ${address}:${port}${dualStack}${extra}`;
}

function acmeBackend(settings: HaproxySettings): string[] {
  const lines = ["backend acme-challenge", "    # HTTP-01 challenges are answered by the control plane"];
  if (!settings.acmeBackendUrl) {
    lines.push('    http-request return status 503 content-type text/plain string "ACME challenges are not forwarded"');
    return lines;
  }
  const url = new URL(settings.acmeBackendUrl);
  const tls = url.protocol === "https:";
  const port = url.port || (tls ? "443" : "80");
  const sni = url.hostname.startsWith("[") ? "" : ` sni str(${url.hostname})`;
  lines.push(`    http-request set-header Host ${url.host}`);
  lines.push(
    `    server control-plane ${url.hostname}:${port}${tls ? ` ssl verify required ca-file @system-ca${sni}` : ""} init-addr last,libc,none`,
  );
  return lines;
}

function frontend(name: string, bind: string, settings: HaproxySettings, https: boolean): string[] {
  const lines = [`frontend ${name}`, bind];
  lines.push("    http-request set-var(txn.host) req.hdr(host),field(1,:),lower");
  lines.push("    acl acme_challenge path_beg /.well-known/acme-challenge/");
  if (https) {
    lines.push("    http-request set-header X-Forwarded-Proto https");
  } else {
    const port = settings.httpsPort === 443 ? "" : `:${settings.httpsPort}`;
    lines.push("    acl has_certificate var(txn.host),map(domain2cert.map) -m found");
    lines.push(
      `    http-request redirect location https://%[var(txn.host)]${port}%[pathq] code ${settings.httpsRedirectCode} if !acme_challenge has_certificate`,
    );
  }
  lines.push("    http-request set-var(txn.backend) var(txn.host),map(domain2backend.map,bk_default)");
  lines.push("    use_backend acme-challenge if acme_challenge");
  lines.push("    use_backend %[var(txn.backend)]");
  lines.push("    default_backend bk_default");
  return lines;
}

/** Generates the bundle; throws InvalidConfiguration when the data cannot make a safe configuration. */
export function generateHaproxyBundle(
  installation: Installation,
  certificateRows: CertificateRow[],
  settings: HaproxySettings,
): HaproxyBundle {
  const warnings: string[] = [];
  const problems: BundleProblem[] = [];
  const problem = (project: string, backend: string, kind: BundleProblem["kind"]) => (message: string) => {
    warnings.push(`WARN: ${message}`);
    problems.push({ project, backend, kind, message });
  };
  const vetBackend = onceEach((params) => vetBackendParams(params, settings.paramsExtraDirectives));
  const vetServer = onceEach(vetServerParams);
  const projectLabel = new Map(installation.projects.map((row) => [row.id, row.label]));
  const hostById = new Map(installation.hosts.map((row) => [row.id, row]));
  const containerById = new Map(installation.containers.map((row) => [row.id, row]));
  const referencesOf = new Map<number, typeof installation.backendContainers>();
  for (const reference of installation.backendContainers) {
    const list = referencesOf.get(reference.backendId);
    if (list) list.push(reference);
    else referencesOf.set(reference.backendId, [reference]);
  }
  const domainsOf = new Map<number, typeof installation.domains>();
  for (const domain of installation.domains) {
    if (!HOST_NAME.test(domain.domainName))
      throw new InvalidConfiguration(`domain ${JSON.stringify(domain.domainName)} is not a host name`);
    const list = domainsOf.get(domain.backendId);
    if (list) list.push(domain);
    else domainsOf.set(domain.backendId, [domain]);
  }

  const projectOfBackend = new Map(installation.backends.map((row) => [row.id, row.projectId]));
  const { byDomain: certificateOf, used } = selectCertificates(certificateRows, installation.domains, (domain) =>
    projectOfBackend.get(domain.backendId),
  );
  const fallback = certificateRows.find((row) => row.source === "fallback");
  if (!fallback) throw new InvalidConfiguration("the fallback certificate is missing");

  const backendSections: string[][] = [];
  const routing: string[] = [];
  const redirects: [string, string][] = [];
  const prefixes: [string, string][] = [];

  for (const backend of installation.backends) {
    const project = projectLabel.get(backend.projectId)!;
    const fqLabel = backendFqLabel(project, backend.id, backend.label);
    const where = `backend ${fqLabel}`;
    const backendDomains = domainsOf.get(backend.id) ?? [];
    const routed: string[] = [];

    if (GLOBAL_BACKEND_LABELS.has(backend.label)) {
      for (const domain of backendDomains) {
        if (backend.label === "nocontent") {
          routed.push(`${domain.domainName} nocontent`);
          continue;
        }
        const url = domain.redirectToUrl;
        if (!url) {
          warnings.push(`WARN: ${domain.domainName} (${where}) has no redirectToUrl and is not routed`);
          continue;
        }
        if (!isValidRedirectUrl(url)) throw new InvalidConfiguration(invalidRedirect(domain.domainName, url));
        const permanent = backend.label === "permredirect";
        if (url.endsWith("*")) {
          routed.push(`${domain.domainName} ${permanent ? "permprefix" : "tempprefix"}`);
          prefixes.push([domain.domainName, redirectPrefix(url)]);
        } else {
          routed.push(`${domain.domainName} ${permanent ? "permredirect" : "tempredirect"}`);
          redirects.push([domain.domainName, url]);
        }
      }
    } else {
      const references = referencesOf.get(backend.id) ?? [];
      if (references.length === 0) {
        if (backendDomains.length > 0) {
          warnings.push(
            `WARN: ${where} has no containers: its domains are not routed (${backendDomains.map((d) => d.domainName).join(", ")})`,
          );
        }
        continue;
      }
      const { lines, maintenance } = backendParams(
        backend.params,
        where,
        vetBackend,
        problem(project, backend.label, "params"),
      );
      const section = [`# project ${project}: backend ${backend.label}`, `backend ${fqLabel}`];
      if (maintenance) {
        section.push("    # _maintenance: every request gets the maintenance page");
        section.push(
          `    http-request return status 503 content-type "text/html; charset=utf-8" string "${MAINTENANCE_PAGE}"`,
        );
      } else {
        for (const line of lines) section.push(`    ${line}`);
        const servers = references.flatMap((reference) => {
          const container = containerById.get(reference.containerId)!;
          const host = hostById.get(container.hostId)!;
          if (!HOST_NAME.test(host.hostname))
            throw new InvalidConfiguration(`${where}: host ${JSON.stringify(host.hostname)} is not a host name`);
          const name = `${host.hostname}_${containerFqLabel(project, container.label)}`;
          // Stored before addresses were vetted (or written past the API): HAProxy must not connect there, nor to a host.
          const address = vetTargetAddress(container.ipv6, installation.hosts, settings.addressExceptions);
          if (!address.ok) {
            problem(
              project,
              backend.label,
              "server-address",
            )(`${where}: server ${name} is left out: its address ${container.ipv6} ${address.error}`);
            return [];
          }
          const vetted = vetServer(reference.params);
          if (!vetted.ok) {
            const { line, reason } = vetted.error;
            problem(
              project,
              backend.label,
              "server-params",
            )(
              `${where}: params of server ${name} line ${line} refused (${reason}); the server is written without them`,
            );
          }
          const params = vetted.ok ? vetted.value : "";
          return [`    server ${name} [${address.value}]:${backend.port}${params ? ` ${params}` : ""}`];
        });
        servers.sort();
        section.push(...servers);
      }
      backendSections.push(section);
      for (const domain of backendDomains) routed.push(`${domain.domainName} ${fqLabel}`);
    }
    if (routed.length > 0) routing.push(`# ${project}: ${backend.label}`, ...routed);
    // Not a warning of the generation: a certificate the CA has not issued yet is the usual state of a new domain.
    for (const domain of backendDomains) {
      if (certificateOf.has(domain.domainName) || !(domain.publicCaCertificate || domain.certProvided)) continue;
      problems.push({
        project,
        backend: backend.label,
        kind: "certificate",
        message: `${domain.domainName} (${where}) asks for a ${domain.certProvided ? "provided" : "public CA"} certificate, but none covers it: it is served over http only`,
      });
    }
  }

  const certificateMap = installation.domains
    .filter((domain) => certificateOf.has(domain.domainName))
    .map((domain) => `${domain.domainName} ${certificateFile(certificateOf.get(domain.domainName)!)}`);

  const config = [
    "# Generated by the proxy configuration API (/admin/gensynchaprx). DO NOT EDIT: the next generation replaces it.",
    "# Relative paths (maps, certificates) are resolved from this file's directory.",
    "",
    "global",
    "    default-path config",
    "    ssl-default-bind-options ssl-min-ver TLSv1.2",
    "",
    "defaults",
    "    mode http",
    "    option forwardfor",
    "    timeout connect 5s",
    "    timeout client 30s",
    "    timeout server 30s",
    "    timeout http-request 10s",
    "",
    ...frontend("http-in", bindLine(settings, settings.httpPort), settings, false),
    "",
    ...frontend(
      "https-in",
      bindLine(settings, settings.httpsPort, " ssl crt fallback.pem crt certs/ alpn h2,http/1.1"),
      settings,
      true,
    ),
    "",
    ...acmeBackend(settings),
    "",
    "backend nocontent",
    "    http-request return status 204",
    "",
    "backend permredirect",
    "    http-request redirect location %[var(txn.host),map(domain2redirect.map)] code 301",
    "",
    "backend tempredirect",
    "    http-request redirect location %[var(txn.host),map(domain2redirect.map)] code 302",
    "",
    "backend permprefix",
    "    http-request redirect prefix %[var(txn.host),map(domain2prefix.map)] code 301",
    "",
    "backend tempprefix",
    "    http-request redirect prefix %[var(txn.host),map(domain2prefix.map)] code 302",
    "",
    "backend bk_default",
    '    http-request return status 404 content-type text/plain string "No site is configured for this host name"',
    ...backendSections.flatMap((section) => ["", ...section]),
    "",
  ].join("\n");

  const mapText = (header: string, lines: string[]) =>
    [`# ${header} (generated, DO NOT EDIT)`, ...lines, ""].join("\n");
  const pairs = (entries: [string, string][]) =>
    entries.sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([key, value]) => `${key} ${value}`);
  const files: Record<string, string> = {
    "haproxy.cfg": config,
    "domain2backend.map": mapText("host name -> backend", routing),
    "domain2redirect.map": mapText("host name -> redirect URL", pairs(redirects)),
    "domain2prefix.map": mapText("host name -> redirect prefix", pairs(prefixes)),
    "domain2cert.map": mapText("host name -> certificate file (https redirect)", certificateMap),
  };
  checkBundle(files);
  return {
    files,
    certificates: [fallback, ...used].map((row) => ({ file: certificateFile(row), row })),
    warnings,
    problems,
  };
}

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
