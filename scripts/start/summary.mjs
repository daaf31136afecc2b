// The one summary `npm start` prints once every service answers: the URLs, the gRPC address, the docs, the
// credentials (masked), where the local state lives, and whether the news are the bundled demo.
import path from "node:path";

/**
 * A host as a URL or an address shows it: the wildcard addresses as localhost, IPv6 in brackets.
 * @param {string} host
 */
export const displayHost = (host) =>
  ["0.0.0.0", "::"].includes(host) ? "localhost" : host.includes(":") ? `[${host}]` : host;

/**
 * Enough of a secret to tell which one is set, not enough to use it.
 * @param {unknown} value
 */
const masked = (value) => (value ? `${String(value).slice(0, 2)}***` : "(not set)");

/**
 * The gateway's address as it reported it, or as planned while it waits for its first xDS snapshot.
 * @param {{ address?: string, waitingFor?: string }} state
 * @param {Record<string, string | undefined>} gatewayValues
 */
function grpcAddress({ address, waitingFor }, gatewayValues) {
  if (address) {
    if (address.startsWith("unix:")) return address;
    const at = address.lastIndexOf(":");
    return `${displayHost(address.slice(0, at))}:${address.slice(at + 1)}`;
  }
  const planned = gatewayValues.GRPC_UDS
    ? `unix:${gatewayValues.GRPC_UDS}`
    : `${displayHost(gatewayValues.GRPC_HOST || "0.0.0.0")}:${gatewayValues.GRPC_PORT || "8081"}`;
  return `${planned} (opens once the first xDS snapshot from ${waitingFor} is accepted)`;
}

/**
 * @param {{ root: string, devOrigin: string, gatewayState: { address?: string, waitingFor?: string },
 *   gatewayValues: Record<string, string | undefined>, vars: Record<string, unknown>, varsOrigin: string,
 *   persistTo?: string, newsDemo: boolean }} state
 */
export function summary({ root, devOrigin, gatewayState, gatewayValues, vars, varsOrigin, persistTo, newsDemo }) {
  const statePath = persistTo ? path.resolve(root, persistTo) : path.join(root, ".wrangler", "state");
  const rows = [
    ["Proxy API", `${devOrigin}/projects  (admin: /admin/...; HTTP Basic)`],
    ["News API", `${devOrigin}/news  (POST /auth with MASTER_KEY for a JWT)`],
    ...(newsDemo ? [["News", "demo articles from a bundled sample (no publisher key set)"]] : []),
    ["Rate limit", `${devOrigin}/json  (HTTP)`],
    ["", `${grpcAddress(gatewayState, gatewayValues)}  (gRPC, envoy.service.ratelimit.v3.RateLimitService)`],
    ["", `${devOrigin}/stats, /metrics, /rlconfig  (Bearer RATELIMIT_ADMIN_TOKEN)`],
    ["API docs", `${devOrigin}/docs  ·  ${devOrigin}/openapi.json`],
    ["Console", `${devOrigin}/console/  (the proxy credentials; RATELIMIT_ADMIN_TOKEN for its rate limit pages)`],
    [
      "Credentials",
      `${varsOrigin}: PROXY_ADMIN_USERNAME=${vars.PROXY_ADMIN_USERNAME ?? "(not set)"}` +
        ` PROXY_ADMIN_PASSWORD=${masked(vars.PROXY_ADMIN_PASSWORD)}`,
    ],
    [
      "",
      `MASTER_KEY=${masked(vars.MASTER_KEY)} RATELIMIT_ADMIN_TOKEN=${masked(vars.RATELIMIT_ADMIN_TOKEN)}` +
        ` HAPROXY_AGENT_TOKEN=${masked(vars.HAPROXY_AGENT_TOKEN)}`,
    ],
    ["Local state", `${statePath}  (D1, Durable Objects, queues; delete it to start afresh)`],
    ["Logs", "warnings and errors only; npm start -- --log-level log shows every request and info line"],
    ["Stop", "Ctrl-C"],
  ];
  const lines = rows.map(([label, value]) => `  ${label.padEnd(12)} ${value}`);
  return `\nnpm start: ready\n${lines.join("\n")}\n`;
}
