// Shared setup of the proxy's job and operations tests: a Worker env with or without agents, the job-lock object, the
// database, and SSH keys for seeded users.
import { env } from "cloudflare:workers";
import { database } from "../../src/shared/db";

export const AGENT = "http://agent.test:9400";
export const KEY_ANNA = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGFubmE= anna@laptop";
export const KEY_BEN = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJlbg== ben@desk";

export const db = () => database(env.DB);
export const locks = () => env.JOB_LOCK.get(env.JOB_LOCK.idFromName("proxy-jobs"));

/** The test Worker's env with settings overridden (a fresh object, so settings are parsed again). */
export const withVars = (vars: Record<string, string> = {}) =>
  ({ ...env, HAPROXY_AGENT_URL: "", SLAVE_AGENT_URLS: "", ...vars }) as unknown as Env;

/** An env whose master agent is AGENT. */
export const agentEnv = (vars: Record<string, string> = {}) =>
  withVars({ HAPROXY_AGENT_URL: AGENT, HAPROXY_AGENT_TOKEN: "agent-token", ...vars });
