// The object cache's settings turned into what its store needs, checked as a whole: what a Worker cannot honour
// (certificate files, skipping the hostname check) is refused with a SettingsError naming it. No Workers import, so
// npm start's settings check runs it too.
import { SettingsError } from "../../../shared/settings";
import type { CounterStoreSettings } from "../../counter-store-settings";
import { type Address, parseHostPort } from "../socket";

export interface MemcacheOptions {
  /** OBJCACHE_HOST_PORT's nodes, in the order given; absent with OBJCACHE_SRV. */
  nodes?: Address[];
  srv?: { name: string; refreshMs: number; dohUrl: string };
  tls: boolean;
  timeoutMs: number;
  jitterMaxSeconds: number;
}

/** The setting at fault, and the whole message (which names it). */
const invalid = (setting: string, message: string) =>
  new SettingsError(`ratelimit settings are invalid: ${message}`, setting);

export function memcacheOptions(settings: CounterStoreSettings): MemcacheOptions {
  const list = settings.OBJCACHE_HOST_PORT.split(",")
    .map((item) => item.trim())
    .filter(Boolean);
  const srv = settings.OBJCACHE_SRV.trim();
  if (list.length > 0 && srv !== "")
    throw invalid("OBJCACHE_SRV", "both OBJCACHE_HOST_PORT and OBJCACHE_SRV are set; use one");
  if (list.length === 0 && srv === "")
    throw invalid("OBJCACHE_HOST_PORT", "BACKEND_TYPE=memcache needs OBJCACHE_HOST_PORT or OBJCACHE_SRV");
  if (settings.OBJCACHE_TLS) {
    for (const name of ["OBJCACHE_TLS_CLIENT_CERT", "OBJCACHE_TLS_CLIENT_KEY", "OBJCACHE_TLS_CACERT"] as const) {
      if (settings[name]) {
        throw invalid(
          name,
          `${name}: a Worker's TLS sockets can present no client certificate and trust no private CA; ` +
            "serve memcached with a certificate from a public CA (locally, NODE_EXTRA_CA_CERTS=<ca file> for wrangler dev)",
        );
      }
    }
    if (settings.OBJCACHE_TLS_SKIP_HOSTNAME_VERIFICATION) {
      throw invalid(
        "OBJCACHE_TLS_SKIP_HOSTNAME_VERIFICATION",
        "OBJCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: a Worker's TLS sockets always verify the server's name",
      );
    }
  }
  return {
    nodes: list.length > 0 ? list.map((item) => parseHostPort(item, "OBJCACHE_HOST_PORT")) : undefined,
    srv: srv
      ? { name: srv, refreshMs: settings.OBJCACHE_SRV_REFRESH, dohUrl: settings.OBJCACHE_SRV_DOH_URL }
      : undefined,
    tls: settings.OBJCACHE_TLS,
    timeoutMs: Math.max(1, settings.OBJCACHE_TIMEOUT),
    jitterMaxSeconds: settings.EXPIRATION_JITTER_MAX_SECONDS,
  };
}
