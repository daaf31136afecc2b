// Builders for the proxy API tests: the project, host and containers most of them start from, made in one call, and
// the project the configuration job tests deploy.
import { asAdmin, createBackend, createContainer, createHost, createProject, expectJson } from "../proxy/fixtures";
import { KEY_ANNA, KEY_BEN } from "../proxy/job-env";

/** A host and the containers to put on it, each label with its IPv6 address. */
export interface HostWithContainers {
  hostname: string;
  ipv6: string;
  containers: Record<string, string>;
}

/**
 * Creates the project, the host and the containers on that host through the administrator API, one after another in
 * the order given (so ids come out as they did when each test made them by hand); returns the containers' ids by label.
 */
export async function createProjectOnHost(
  project: string,
  host: HostWithContainers,
  fullname?: string,
): Promise<Record<string, number>> {
  await createProject(project, fullname);
  await createHost(host.hostname, host.ipv6);
  return createContainers(project, host.hostname, host.containers);
}

/** Creates the project and its containers (label → IPv6 address) on a host that exists; returns their ids by label. */
export async function createProjectWithContainers(
  project: string,
  hostname: string,
  containers: Record<string, string>,
) {
  await createProject(project);
  return createContainers(project, hostname, containers);
}

async function createContainers(project: string, hostname: string, containers: Record<string, string>) {
  const ids: Record<string, number> = {};
  for (const [label, ipv6] of Object.entries(containers))
    ids[label] = await createContainer(project, { label, hostname, ipv6 });
  return ids;
}

/**
 * The project the configuration job tests generate and deploy: web1 and web2 on node1.example.net; backend www (port
 * 8080, both containers, www. and shop.<label>.example) and permredirect (old.<label>.example redirected to www); the
 * users anna and ben with their SSH keys. `web2Params`: web2's server params in www. Returns the containers' ids.
 */
export async function createDeployedProject(label: string, web2Params?: string): Promise<Record<string, number>> {
  const ids = await createProjectOnHost(label, {
    hostname: "node1.example.net",
    ipv6: "2001:db8::1",
    containers: { web1: "2001:db8::11", web2: "2001:db8::12" },
  });
  await createBackend(label, {
    label: "www",
    port: 8080,
    backendContainers: [
      { containerId: ids.web1 },
      { containerId: ids.web2, ...(web2Params && { params: web2Params }) },
    ],
    domainForwardings: [{ domainName: `www.${label}.example` }, { domainName: `shop.${label}.example` }],
  });
  await createBackend(label, {
    label: "permredirect",
    domainForwardings: [{ domainName: `old.${label}.example`, redirectToUrl: `https://www.${label}.example/*` }],
  });
  await expectJson(asAdmin("/admin/users", "POST", { email: "anna@example.com", sshPublicKey: KEY_ANNA }), 200);
  await expectJson(asAdmin("/admin/users", "POST", { email: "ben@example.com", sshPublicKey: KEY_BEN }), 200);
  return ids;
}

/** The names of the files an agent is sent for a configuration, sorted: the bundle's and the fallback certificate. */
export const AGENT_FILES = [
  "crt-list.txt",
  "domain2backend.map",
  "domain2cert.map",
  "domain2prefix.map",
  "domain2redirect.map",
  "fallback.pem",
  "haproxy.cfg",
];

/** Creates each project with one backend, web, and nothing else: the tenants domains and zones move between. */
export async function createWebProjects(labels: string[]) {
  for (const label of labels) {
    await createProject(label);
    await createBackend(label, { label: "web" });
  }
}

/** One operation of POST /domains/massupdate on `domainName`, for the backend web of the project. */
export const webDomainOperation = (domainName: string, projectLabel: string, operation = "CREATE") => ({
  operation,
  domainName,
  projectLabel,
  backendLabel: "web",
});
