// Settings of the proxy configuration API, read from the Worker's vars and secrets.
import { z } from "zod";
import { envOptionalString, readSettings } from "../shared/settings";

export const ProxySettings = z.object({
  /** master (default) runs writes and jobs; a slave answers them with 405 and serves reads. */
  INSTANCE_ROLE: z.preprocess((v) => (v === "" ? undefined : v), z.enum(["master", "slave"]).default("master")),
  /** Secret: user name of the bootstrap administrator, who sees every project and may use /admin. */
  PROXY_ADMIN_USERNAME: envOptionalString(),
  /** Secret: that administrator's password. Without both, no administrator exists. */
  PROXY_ADMIN_PASSWORD: envOptionalString(),
});
export type ProxySettings = z.output<typeof ProxySettings>;

export const proxySettings = (env: object): ProxySettings => readSettings(ProxySettings, env, "proxy");
