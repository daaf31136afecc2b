// The meanings of the news API's settings (src/news/settings.ts), for docs/settings.md only: the Worker never imports
// this module (.dependency-cruiser.cjs), so the texts stay out of its bundle.
import { type SettingMeanings, oneLine } from "../shared/settings";
import type { NewsSettings } from "./settings";

export const newsSettingMeanings: SettingMeanings<keyof typeof NewsSettings.shape> = {
  MASTER_KEY:
    "The master key, required (as `access_token`) to create users and to log in. Unset, those routes answer 500.",
  JWT_SECRET:
    "HS256 key (its UTF-8 bytes) that signs and checks session tokens. Unset, routes that need one answer 500.",
  JWT_EXPIRES_IN: "Lifetime of a session token, as jose reads it: a number and a unit, e.g. `7d`, `12h`, `30m`.",
  JWT_ORIGINAL_TOKENS_WITHOUT_EXP: oneLine`
    \`true\` also accepts the original service's tokens that carry no \`exp\` (\`{id, iat}\`, as the generator and
    restfulnews signed them, valid for ever there), for an installation moving from it. A password change after their
    \`iat\` or the user's deletion still ends them. Off, such a token is refused (401).`,
  GUARDIAN_API_KEY: "The Guardian Content API key; without it that publisher is skipped.",
  NYT_API_KEY: "New York Times Article Search API key; without it that publisher is skipped.",
  NEWS_FEEDS: "RSS or Atom feeds to ingest (http or https URLs), separated by commas or white space.",
  NEWS_DEMO: oneLine`
    \`true\` makes ingestion read a bundled sample of articles (about Australian companies, in the Guardian's, NYT's
    and RSS formats) instead of the publishers, through the same parsing, company linking and full-text index; a
    second run adds nothing. \`npm start\` sets it when no publisher key is configured.`,
  NEWS_LOOKBACK_DAYS:
    "Days the first ingestion of a publisher reaches back; later runs ask only for what is newer than the last.",
  NEWS_MAX_BODY_BYTES: oneLine`
    Largest request body, in bytes, any news route reads (JSON, URL-encoded or multipart form); a larger one answers
    413 before it is buffered whole. A user or an article is a few KB.`,
};
