// The real HAProxy's judgement of a backend's params before they are stored: the master's agent runs `haproxy -c` on
// a minimal configuration (the generator's global and defaults, and this one backend written as the generator would
// write it), and its refusal is answered to the writer with HAProxy's reason. Without an agent, vetting alone applies.
import type { BackendDraft, ParamsCheck, ParamsVerdict } from "../installation/backend-check";
import { vetBackendParams, vetServerParams } from "../haproxy-params/index";
import type { ProxySettings } from "../settings";
import { AgentError, checkWithAgent } from "./agent-client";
import { serverLine } from "./backend-sections";
import { agentOf } from "./checked-bundle";
import { bundleDigest } from "./config";
import { HEADER_AND_DEFAULTS } from "./config-frame";
import { readAlert } from "./isolation";

/** The section's name in the minimal configuration. */
const CHECKED_BACKEND = "bk_params_check";

/** Which input field each line of the minimal configuration comes from, by line number (1-based). */
export interface CheckConfig {
  text: string;
  fields: Map<number, string>;
  firstLine: number;
  lastLine: number;
}

/**
 * The minimal configuration of one backend, its params and servers vetted and written as the generator writes them
 * (whatever `_maintenance` says: the lines are what a later generation would write once it is lifted).
 */
export function checkConfig(draft: BackendDraft, extraDirectives: readonly string[] = []): CheckConfig {
  const lines = [
    ...HEADER_AND_DEFAULTS,
    "",
    // haproxy -c refuses a configuration without a listener (exit 2); it binds nothing.
    "frontend fe_params_check",
    "    bind 127.0.0.1:65535",
    `    default_backend ${CHECKED_BACKEND}`,
    "",
    `backend ${CHECKED_BACKEND}`,
  ];
  const firstLine = lines.length;
  const fields = new Map<number, string>();
  const vetted = vetBackendParams(draft.params, extraDirectives);
  for (const line of vetted.ok ? vetted.value.lines : []) {
    lines.push(`    ${line}`);
    fields.set(lines.length, "params");
  }
  for (const server of draft.servers) {
    const params = vetServerParams(server.params, vetted.ok ? vetted.value : undefined);
    lines.push(serverLine(server.name, server.address, draft.port, params.ok ? params.value : ""));
    fields.set(lines.length, server.field);
  }
  return { text: `${lines.join("\n")}\n`, fields, firstLine, lastLine: lines.length };
}

/**
 * The first refusal HAProxy printed about the backend, with the field its line came from; a refusal that names no
 * line of it (there is nothing else in the configuration) is answered as the params'.
 */
function firstRefusal(config: CheckConfig, alerts: readonly string[], error: string): ParamsVerdict {
  const read = alerts.map(readAlert).filter((alert) => alert !== undefined);
  const about = read.find(
    (alert) =>
      alert.proxy === CHECKED_BACKEND ||
      (alert.line !== undefined && config.firstLine <= alert.line && alert.line <= config.lastLine),
  );
  if (!about) return { ok: false, field: "params", message: read[0]?.message ?? error };
  return { ok: false, field: config.fields.get(about.line ?? 0) ?? "params", message: about.message };
}

// The global fetch is looked up at call time, so that tests intercepting outbound fetch see the checks.
const outbound: typeof fetch = (input, init) => fetch(input, init);

/** The check the backend writes use, or undefined where no agent is configured. */
export function haproxyParamsCheck(settings: ProxySettings): ParamsCheck | undefined {
  const agent = agentOf(settings);
  if (!agent) return undefined;
  return async (draft) => {
    const config = checkConfig(draft, settings.HAPROXY_PARAMS_EXTRA_DIRECTIVES);
    const files = { "haproxy.cfg": config.text };
    try {
      const check = await checkWithAgent(outbound, { ...agent, digest: await bundleDigest(files), files });
      return check.valid ? { ok: true } : firstRefusal(config, check.alerts, check.error);
    } catch (error) {
      if (!(error instanceof AgentError)) throw error;
      return {
        ok: "unchecked",
        reason:
          error.reason === "unreachable"
            ? "the agent did not answer"
            : error.reason === "unchecked"
              ? "the agent's haproxy -c did not finish in time"
              : "the agent refused to check",
      };
    }
  };
}
