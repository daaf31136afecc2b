// Settings of the news API, read from the Worker's vars and secrets.
import { z } from "../shared/zod";
import type { BodyLimit } from "../shared/http/request-body";
import { envBoolean, envInteger, envSecret, envString, settingsReader, SettingsError } from "../shared/settings";

export const NewsSettings = z.object({
  MASTER_KEY: envSecret(),
  JWT_SECRET: envSecret(),
  JWT_EXPIRES_IN: envString("7d").pipe(
    z
      .string()
      .regex(
        /^0*[1-9]\d* ?(s|sec|secs|m|min|mins|h|hr|hrs|d|day|days|w|week|weeks)$/i,
        "expected a duration such as 7d, 12h or 30m",
      ),
  ),
  JWT_ORIGINAL_TOKENS_WITHOUT_EXP: envBoolean(false),
  GUARDIAN_API_KEY: envSecret(),
  NYT_API_KEY: envSecret(),
  NEWS_FEEDS: envString("")
    .transform((text, ctx) => {
      const urls = [...new Set(text.split(/[\s,]+/).filter(Boolean))];
      for (const url of urls) {
        if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
          ctx.addIssue({ code: "custom", message: "expected http(s) URLs separated by commas" });
          return z.NEVER;
        }
      }
      return urls;
    })
    .meta({ kind: "list", items: "URLs" }),
  NEWS_DEMO: envBoolean(false),
  NEWS_LOOKBACK_DAYS: envInteger(7, 1),
  NEWS_MAX_BODY_BYTES: envInteger(1024 * 1024, 1),
});
export type NewsSettings = z.output<typeof NewsSettings>;

export const newsSettings: (env: object) => NewsSettings = settingsReader(NewsSettings, "news");

/** A secret the request cannot do without: unset, the service answers 500 naming it (never a silent 401). */
export function requiredSecret(settings: NewsSettings, name: "MASTER_KEY" | "JWT_SECRET"): string {
  const value = settings[name];
  if (!value) throw new SettingsError(`news settings are invalid: ${name} is not set`);
  return value;
}

/** The body limit every news route reads its body within. */
export const newsBodyLimit = (env: object): BodyLimit => ({
  maxBytes: newsSettings(env).NEWS_MAX_BODY_BYTES,
  setting: "NEWS_MAX_BODY_BYTES",
});
