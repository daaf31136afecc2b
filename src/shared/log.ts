// Structured logging used by every service; unexpected errors go to the log, never to the client. LOG_LEVEL filters
// (the logrus level names of the rate limit reference; default info) and LOG_FORMAT picks logrus-style text
// (`time=... level=info msg=... key=value`, the default) or JSON objects with `@message`, `@timestamp` and `level`.
import { perIsolate } from "./isolate";

export type LogLevel = "panic" | "fatal" | "error" | "warn" | "info" | "debug" | "trace";

const SEVERITY: Record<LogLevel, number> = { panic: 0, fatal: 1, error: 2, warn: 3, info: 4, debug: 5, trace: 6 };
/** How each level is written, as logrus names it. */
const LEVEL_NAME: Record<LogLevel, string> = {
  panic: "panic",
  fatal: "fatal",
  error: "error",
  warn: "warning",
  info: "info",
  debug: "debug",
  trace: "trace",
};

interface LogSettings {
  level: number;
  format: "text" | "json";
}

let current: LogSettings = { level: SEVERITY.info, format: "text" };
let configuredFrom: object | undefined;

function parseLevel(value: string): number | undefined {
  const name = value.trim().toLowerCase();
  if (name === "warning") return SEVERITY.warn;
  return name in SEVERITY ? SEVERITY[name as LogLevel] : undefined;
}

/**
 * Applies LOG_LEVEL and LOG_FORMAT of this env (the Worker's entry calls it for every event; it costs a pointer
 * comparison once the env has been seen). A malformed value keeps the default and says so once, naming the variable.
 */
export function configureLogging(env: object): void {
  if (configuredFrom === env) return;
  configuredFrom = env;
  current = logSettingsOf(env);
}

/** LOG_LEVEL and LOG_FORMAT of an env, with the default kept for each malformed one and that one's problem. */
export function readLogSettings(vars: Record<string, unknown>): {
  settings: LogSettings;
  problems: { setting: "LOG_LEVEL" | "LOG_FORMAT"; message: string }[];
} {
  const problems: { setting: "LOG_LEVEL" | "LOG_FORMAT"; message: string }[] = [];
  const settings: LogSettings = { level: SEVERITY.info, format: "text" };
  const level = typeof vars.LOG_LEVEL === "string" ? vars.LOG_LEVEL : "";
  if (level !== "") {
    const severity = parseLevel(level);
    if (severity === undefined)
      problems.push({ setting: "LOG_LEVEL", message: "expected panic, fatal, error, warn, info, debug or trace" });
    else settings.level = severity;
  }
  const format = typeof vars.LOG_FORMAT === "string" ? vars.LOG_FORMAT.trim().toLowerCase() : "";
  if (format === "json" || format === "text") settings.format = format;
  else if (format !== "") problems.push({ setting: "LOG_FORMAT", message: "expected text or json" });
  return { settings, problems };
}

/** LOG_LEVEL and LOG_FORMAT of an env, read once per env; a malformed value keeps the default and is said once. */
const logSettingsOf = perIsolate("log settings", (env: object): LogSettings => {
  const { settings, problems } = readLogSettings(env as Record<string, unknown>);
  current = settings;
  for (const { setting, message } of problems) {
    log("error", `log settings are invalid, using the default: ${setting}: ${message}`);
  }
  return settings;
});

/** Whether a line of this level would be written (to skip building expensive fields). */
export function logEnabled(level: LogLevel): boolean {
  return SEVERITY[level] <= current.level;
}

function textValue(value: unknown): string {
  const text =
    typeof value === "string"
      ? value
      : value instanceof Error
        ? value.message
        : (JSON.stringify(value) ?? String(value));
  // logrus quotes anything beyond plain word characters.
  return /^[A-Za-z0-9\-._/@^+]+$/.test(text) ? text : JSON.stringify(text);
}

function format(level: LogLevel, message: string, fields: Record<string, unknown>): string {
  const timestamp = new Date().toISOString();
  if (current.format === "json") {
    return JSON.stringify({ "@timestamp": timestamp, level: LEVEL_NAME[level], "@message": message, ...fields });
  }
  let line = `time=${textValue(timestamp)} level=${LEVEL_NAME[level]} msg=${textValue(message)}`;
  for (const key of Object.keys(fields).sort()) {
    if (fields[key] !== undefined) line += ` ${key}=${textValue(fields[key])}`;
  }
  return line;
}

/** Writes one line at `level` when LOG_LEVEL lets it through. */
export function log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
  if (!logEnabled(level)) return;
  const line = format(level, message, fields);
  if (SEVERITY[level] <= SEVERITY.error) console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

/** How many causes deep an error is logged. */
const MAX_CAUSES = 4;

/**
 * An error as a log field: its name, message and stack, and the name and message of each cause it wraps (drizzle's
 * "Failed query: ..." wraps D1's own error, which says why), at most MAX_CAUSES deep.
 */
function errorDetail(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const causeOf = (current: unknown, depth: number): Record<string, unknown> | undefined => {
    if (current === undefined || depth > MAX_CAUSES) return undefined;
    if (!(current instanceof Error)) return { message: String(current) };
    const cause = causeOf(current.cause, depth + 1);
    return { name: current.name, message: current.message, ...(cause && { cause }) };
  };
  const cause = causeOf(error.cause, 1);
  return { name: error.name, message: error.message, stack: error.stack, ...(cause && { cause }) };
}

export function logError(message: string, error: unknown): void {
  log("error", message, { error: errorDetail(error) });
}

export function logWarn(message: string, fields: Record<string, unknown> = {}): void {
  log("warn", message, fields);
}

export function logInfo(message: string, fields: Record<string, unknown> = {}): void {
  log("info", message, fields);
}

export function logDebug(message: string, fields: Record<string, unknown> = {}): void {
  log("debug", message, fields);
}
