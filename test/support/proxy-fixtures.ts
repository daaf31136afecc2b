// Builders for the proxy API tests: the project, host and containers most of them start from, made in one call.
import { createContainer, createHost, createProject } from "../proxy/fixtures";

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
  const ids: Record<string, number> = {};
  for (const [label, ipv6] of Object.entries(host.containers))
    ids[label] = await createContainer(project, { label, hostname: host.hostname, ipv6 });
  return ids;
}
