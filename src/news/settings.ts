// Settings of the news API, read from the Worker's vars and secrets.
import { z } from "zod";
import { envOptionalString, envString, readSettings } from "../shared/settings";

export const NewsSettings = z.object({
  /** Secret: the master key required (as access_token) to create users and to log in. */
  MASTER_KEY: envOptionalString(),
  /** Secret: HS256 key for session tokens (its UTF-8 bytes). */
  JWT_SECRET: envOptionalString(),
  /** Token lifetime, as jose reads it: "7d", "12h", "30m". */
  JWT_EXPIRES_IN: envString("7d").pipe(z.string().regex(/^\d+\s*(s|sec|secs|m|min|mins|h|hr|hrs|d|day|days|w|week|weeks)$/i, "expected a duration such as 7d, 12h or 30m")),
  /** Secret: The Guardian Content API key; without it that publisher is skipped. */
  GUARDIAN_API_KEY: envOptionalString(),
  /** Secret: New York Times Article Search API key; without it that publisher is skipped. */
  NYT_API_KEY: envOptionalString(),
  /** Comma-separated RSS or Atom feed URLs to ingest. */
  NEWS_FEEDS: envString(""),
});
export type NewsSettings = z.output<typeof NewsSettings>;

export const newsSettings = (env: object): NewsSettings => readSettings(NewsSettings, env, "news");
