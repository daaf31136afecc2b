#!/usr/bin/env node
// Prints the token the control plane sends the agent at <agent-url> when HAPROXY_AGENT_TOKENS_PER_AGENT is true:
// HMAC-SHA256 of the URL keyed with HAPROXY_AGENT_TOKEN (read from the environment, never from the command line,
// which other users may read). Configure the output as that agent's HAPROXY_AGENT_TOKEN. The derivation is
// src/proxy/haproxy/agent-token.ts's: keep the two alike.
import { createHmac } from "node:crypto";
import { pathToFileURL } from "node:url";

/**
 * The URL a token is derived for: scheme, lower-case host, the port unless the default one, the path without "/".
 * @param {string} agentUrl
 */
export function canonicalAgentUrl(agentUrl) {
  const url = new URL(agentUrl);
  return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, "");
}

/** @param {string} secret @param {string} agentUrl */
export const derivedAgentToken = (secret, agentUrl) =>
  createHmac("sha256", secret).update(canonicalAgentUrl(agentUrl)).digest("hex");

const USAGE = `usage: HAPROXY_AGENT_TOKEN=<secret> node haproxy-agent/derive-token.mjs <agent-url>
Prints the token of the agent at <agent-url> (as written in HAPROXY_AGENT_URL or SLAVE_AGENT_URLS) under
HAPROXY_AGENT_TOKENS_PER_AGENT: set it as that agent's HAPROXY_AGENT_TOKEN.`;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [agentUrl, ...rest] = process.argv.slice(2);
  const secret = process.env.HAPROXY_AGENT_TOKEN ?? "";
  let problem = !agentUrl || rest.length > 0 || agentUrl === "-h" || agentUrl === "--help" ? USAGE : undefined;
  if (!problem && !secret) problem = "HAPROXY_AGENT_TOKEN (the control plane's secret) is not set";
  if (!problem && !URL.canParse(agentUrl)) problem = `not a URL: ${agentUrl}`;
  if (problem) {
    console.error(problem);
    process.exit(2);
  }
  console.log(derivedAgentToken(secret, agentUrl));
}
