// Settings of the news API, read from the Worker's vars and secrets.
import { z } from "../shared/zod";
import type { BodyLimit } from "../shared/http/request-body";
import {
  envBoolean,
  envInteger,
  envSecret,
  envString,
  oneLine,
  settingsReader,
  SettingsError,
} from "../shared/settings";

export const NewsSettings = z.object({
  MASTER_KEY: envSecret().describe(
    "The master key, required (as `access_token`) to create users and to log in. Unset, those routes answer 500.",
  ),
  JWT_SECRET: envSecret().describe(
    "HS256 key (its UTF-8 bytes) that signs and checks session tokens. Unset, routes that need one answer 500.",
  ),
  JWT_EXPIRES_IN: envString("7d")
    .pipe(
      z
        .string()
        .regex(
          /^0*[1-9]\d* ?(s|sec|secs|m|min|mins|h|hr|hrs|d|day|days|w|week|weeks)$/i,
          "expected a duration such as 7d, 12h or 30m",
        ),
    )
    .describe("Lifetime of a session token, as jose reads it: a number and a unit, e.g. `7d`, `12h`, `30m`."),
  JWT_ORIGINAL_TOKENS_WITHOUT_EXP: envBoolean(false).describe(oneLine`
    \`true\` also accepts the original service's tokens that carry no \`exp\` (\`{id, iat}\`, as the generator and
    restfulnews signed them, valid for ever there), for an installation moving from it. A password change after their
    \`iat\` or the user's deletion still ends them. Off, such a token is refused (401).`),
  GUARDIAN_API_KEY: envSecret().describe("The Guardian Content API key; without it that publisher is skipped."),
  NYT_API_KEY: envSecret().describe("New York Times Article Search API key; without it that publisher is skipped."),
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
    .meta({
      kind: "list",
      items: "URLs",
      description: "RSS or Atom feeds to ingest (http or https URLs), separated by commas or white space.",
    }),
  NEWS_DEMO: envBoolean(false).describe(oneLine`
    \`true\` makes ingestion read a bundled sample of articles (about Australian companies, in the Guardian's, NYT's
    and RSS formats) instead of the publishers, through the same parsing, company linking and full-text index; a
    second run adds nothing. \`npm start\` sets it when no publisher key is configured.`),
  NEWS_LOOKBACK_DAYS: envInteger(7, 1).describe(
    "Days the first ingestion of a publisher reaches back; later runs ask only for what is newer than the last.",
  ),
  NEWS_MAX_BODY_BYTES: envInteger(1024 * 1024, 1).describe(oneLine`
    Largest request body, in bytes, any news route reads (JSON, URL-encoded or multipart form); a larger one answers
    413 before it is buffered whole. A user or an article is a few KB.`),
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
