// The meanings of LOG_LEVEL and LOG_FORMAT (read by src/shared/log.ts without a schema), for docs/settings.md only:
// the Worker never imports this module (.dependency-cruiser.cjs), so the texts stay out of its bundle.
import type { SettingDoc } from "./settings";

/**
 * LOG_LEVEL and LOG_FORMAT: log.ts reads them itself rather than through a schema, so that a bad value never fails the
 * Worker (npm start still refuses it).
 */
export const logSettingDocs: SettingDoc[] = [
  {
    name: "LOG_LEVEL",
    kind: "choice",
    choices: ["panic", "fatal", "error", "warn", "info", "debug", "trace"],
    default: "info",
    description:
      "Lowest level written, as logrus (the reference's logger) names them; `warning` is read as `warn`. A malformed " +
      "value is logged once and the default kept; `npm start` refuses it.",
  },
  {
    name: "LOG_FORMAT",
    kind: "choice",
    choices: ["text", "json"],
    default: "text",
    description:
      "`text`: logrus-style lines, `time=... level=info msg=... key=value`. `json`: one object per line with " +
      "`@message`, `@timestamp`, `level` and the fields. A malformed value is logged once and the default kept; " +
      "`npm start` refuses it.",
  },
];
