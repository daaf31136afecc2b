// The key-value store's settings turned into what the pool needs, checked as a whole: what a Worker cannot honour
// (unix sockets, certificate files, skipping the hostname check) is refused here with a SettingsError naming it.
import { SettingsError } from "../../../shared/settings";
import type { CounterStoreSettings } from "../../counter-store-settings";
import { parseHostPort } from "../socket";
import type { Credentials } from "./connection";
import type { OnEmpty } from "./pool";
import type { TopologyOptions } from "./topology";

/** One pool's options; plain data, sent along with each call to the pool's Durable Objects. */
export interface RedisPoolOptions {
  /** "main", or "persecond" for the per-second store. */
  role: "main" | "persecond";
  /** Hash of everything below: names the pool's objects, so a changed setting gets fresh connections. */
  fingerprint: string;
  topology: TopologyOptions;
  tls: boolean;
  auth?: Credentials;
  poolSize: number;
  timeoutMs: number;
  windowMs: number;
  onEmpty: OnEmpty;
  waitMs: number;
}

export interface RedisOptions {
  main: RedisPoolOptions;
  /** Present with KVSTORE_PERSECOND: counters of per-second limits live there. */
  perSecond?: RedisPoolOptions;
  jitterMaxSeconds: number;
  healthCheckActiveConnection: boolean;
}

/** `password` or `user:password` (split at the first colon, as the reference does). */
export function parseCredentials(text: string | undefined): Credentials | undefined {
  if (text === undefined || text === "") return undefined;
  const colon = text.indexOf(":");
  return colon < 0 ? { password: text } : { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** FNV-1a, 32 bits, hex: short and stable across isolates. */
export function fingerprintOf(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/** The setting at fault, and the whole message (which names it). */
const invalid = (setting: string, message: string) =>
  new SettingsError(`ratelimit settings are invalid: ${message}`, setting);

function topologyOf(type: string, url: string, prefix: string, sentinelAuth?: Credentials): TopologyOptions {
  const items = url
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
  if (items.length === 0) throw invalid(`${prefix}_URL`, `${prefix}_URL is required with BACKEND_TYPE=redis`);
  if (items.some((item) => item.startsWith("/") || item.startsWith("unix:"))) {
    throw invalid(`${prefix}_URL`, `${prefix}_URL: a Worker cannot reach a unix socket; give the store's host:port`);
  }
  if (type === "single") {
    if (items.length !== 1) throw invalid(`${prefix}_URL`, `${prefix}_URL: a single store takes one host:port`);
    return { type: "single", address: parseHostPort(items[0], `${prefix}_URL`) };
  }
  if (type === "sentinel") {
    if (items.length < 2)
      throw invalid(
        `${prefix}_URL`,
        `${prefix}_URL: sentinel needs the master name, then at least one sentinel host:port`,
      );
    const [masterName, ...sentinels] = items;
    return {
      type: "sentinel",
      masterName,
      sentinels: sentinels.map((item) => parseHostPort(item, `${prefix}_URL`)),
      sentinelAuth,
    };
  }
  return { type: "cluster", nodes: items.map((item) => parseHostPort(item, `${prefix}_URL`)) };
}

type PoolSettingNames =
  | "SOCKET_TYPE"
  | "URL"
  | "TYPE"
  | "POOL_SIZE"
  | "TIMEOUT"
  | "POOL_ON_EMPTY_BEHAVIOR"
  | "POOL_ON_EMPTY_WAIT_DURATION"
  | "PIPELINE_WINDOW"
  | "TLS"
  | "AUTH"
  | "SENTINEL_AUTH";

function poolOptions(settings: CounterStoreSettings, role: "main" | "persecond"): RedisPoolOptions {
  const prefix = role === "main" ? "KVSTORE" : "KVSTORE_PERSECOND";
  const get = <N extends PoolSettingNames>(name: N) =>
    (settings as unknown as Record<string, unknown>)[`${prefix}_${name}`] as CounterStoreSettings[`KVSTORE_${N}`];
  if (get("SOCKET_TYPE") === "unix")
    throw invalid(`${prefix}_SOCKET_TYPE`, `${prefix}_SOCKET_TYPE: a Worker cannot reach a unix socket; use tcp`);
  const type = get("TYPE");
  if (type === "cluster" && get("PIPELINE_WINDOW") === 0) {
    throw invalid(
      `${prefix}_PIPELINE_WINDOW`,
      `${prefix}_PIPELINE_WINDOW must be non-zero with ${prefix}_TYPE=cluster (150us to 500us is typical)`,
    );
  }
  const tls = get("TLS");
  if (tls) {
    for (const name of ["KVSTORE_TLS_CLIENT_CERT", "KVSTORE_TLS_CLIENT_KEY", "KVSTORE_TLS_CACERT"] as const) {
      if (settings[name]) {
        throw invalid(
          name,
          `${name}: a Worker's TLS sockets can present no client certificate and trust no private CA; ` +
            "serve the store with a certificate from a public CA (locally, NODE_EXTRA_CA_CERTS=<ca file> for wrangler dev) " +
            "and authenticate with KVSTORE_AUTH",
        );
      }
    }
    if (settings.KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION) {
      throw invalid(
        "KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION",
        "KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: a Worker's TLS sockets always verify the server's name",
      );
    }
  }
  const options = {
    role,
    topology: topologyOf(type, get("URL"), prefix, parseCredentials(get("SENTINEL_AUTH"))),
    tls,
    auth: parseCredentials(get("AUTH")),
    poolSize: get("POOL_SIZE"),
    timeoutMs: Math.max(1, get("TIMEOUT")),
    windowMs: get("PIPELINE_WINDOW"),
    onEmpty: get("POOL_ON_EMPTY_BEHAVIOR"),
    waitMs: get("POOL_ON_EMPTY_WAIT_DURATION"),
  };
  return { ...options, fingerprint: fingerprintOf(JSON.stringify(options)) };
}

export function redisOptions(settings: CounterStoreSettings): RedisOptions {
  return {
    main: poolOptions(settings, "main"),
    perSecond: settings.KVSTORE_PERSECOND ? poolOptions(settings, "persecond") : undefined,
    jitterMaxSeconds: settings.EXPIRATION_JITTER_MAX_SECONDS,
    healthCheckActiveConnection: settings.KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION,
  };
}
