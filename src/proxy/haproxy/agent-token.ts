// The bearer token the control plane sends an agent: HAPROXY_AGENT_TOKEN itself, or, with
// HAPROXY_AGENT_TOKENS_PER_AGENT, one derived for the agent's URL, so that a load balancer's token opens no other.
// haproxy-agent/derive-token.mjs derives the same for the operator to configure on that agent: keep the two alike.
import { toHex } from "../../shared/bytes";

/** The URL a token is derived for: scheme, lower-case host, the port unless the default one, the path without "/". */
export function canonicalAgentUrl(agentUrl: string): string {
  const url = new URL(agentUrl);
  return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, "");
}

/** HMAC-SHA256 of the agent's canonical URL keyed with the shared secret, in hex. */
export async function derivedAgentToken(secret: string, agentUrl: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(canonicalAgentUrl(agentUrl)));
  return toHex(new Uint8Array(mac));
}

/** What the agent at `agentUrl` expects: the secret itself unless tokens are per agent. */
export const bearerTokenFor = (call: { agentUrl: string; token: string; tokenPerAgent?: boolean }) =>
  call.tokenPerAgent ? derivedAgentToken(call.token, call.agentUrl) : Promise.resolve(call.token);
