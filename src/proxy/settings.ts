// Settings of the proxy configuration API, read from the Worker's vars and secrets.
import { z } from "zod";
import { envInteger, envOptionalString, readSettings } from "../shared/settings";

export const ProxySettings = z.object({
  /** master (default) runs writes and jobs; a slave answers them with 405 and serves reads. */
  INSTANCE_ROLE: z.preprocess((v) => (v === "" ? undefined : v), z.enum(["master", "slave"]).default("master")),
  /** Secret: user name of the bootstrap administrator, who sees every project and may use /admin. */
  PROXY_ADMIN_USERNAME: envOptionalString(),
  /** Secret: that administrator's password. Without both, no administrator exists. */
  PROXY_ADMIN_PASSWORD: envOptionalString(),
  /**
   * Most operations one POST /domains/massupdate may carry (larger requests answer 400). The whole request is
   * one D1 batch whose rows travel as a JSON parameter, and D1 caps a value at 2 MB.
   */
  PROXY_MASS_UPDATE_MAX_OPERATIONS: envInteger(5000, 1),
});
export type ProxySettings = z.output<typeof ProxySettings>;

export const proxySettings = (env: object): ProxySettings => readSettings(ProxySettings, env, "proxy");
