// D1_USAGE_HEADER: the D1 work of each HTTP request, answered in a Server-Timing header, for the benchmarks (which
// print calls and rows written per 1,000 requests beside their ratios). Off by default; off, nothing is counted and
// nothing is added. On, the Worker's entry serves each request inside its own usage record (AsyncLocalStorage: the
// requests an isolate serves at once each count into their own), and database() (src/shared/db.ts) hands out a
// drizzle handle over the metered binding (d1-meter.ts) whenever a record is in scope.
import { AsyncLocalStorage } from "node:async_hooks";
import { d1ServerTiming, emptyD1Usage, type D1Usage } from "./d1-meter";
import { logError } from "./log";
import { envBoolean, SettingsError, settingsReader } from "./settings";
import { z } from "./zod";

export const DiagnosticsSettings = z.object({
  D1_USAGE_HEADER: envBoolean(false),
});
export type DiagnosticsSettings = z.output<typeof DiagnosticsSettings>;

export const diagnosticsSettings: (env: object) => DiagnosticsSettings = settingsReader(
  DiagnosticsSettings,
  "diagnostics",
);

/** The usage record of the request being served, while D1_USAGE_HEADER is on. */
const scope = new AsyncLocalStorage<D1Usage>();

/** The usage record of the request this code runs for; none when D1_USAGE_HEADER is off (or outside a request). */
export const currentD1Usage = (): D1Usage | undefined => scope.getStore();

/**
 * Serves a request: as `serve` answers it when D1_USAGE_HEADER is off, with its D1 work counted and the
 * Server-Timing entry added when it is on. A malformed D1_USAGE_HEADER answers 500 naming it (the root's `{error}`
 * shape: the setting is the Worker's, no service's), as a malformed setting of a service does for its routes.
 */
export function serveWithD1Usage(env: object, serve: () => Response | Promise<Response>): Response | Promise<Response> {
  let on: boolean;
  try {
    on = diagnosticsSettings(env).D1_USAGE_HEADER;
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    logError("worker: invalid settings", error);
    return Response.json({ error: error.message }, { status: 500 });
  }
  if (!on) return serve();
  const usage = emptyD1Usage();
  return scope.run(usage, async () => withServerTiming(await serve(), d1ServerTiming(usage)));
}

/** The response with the entry appended to its Server-Timing (a copy when its headers are immutable). */
function withServerTiming(response: Response, entry: string): Response {
  if (response.webSocket) return response;
  try {
    response.headers.append("Server-Timing", entry);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.append("Server-Timing", entry);
    return copy;
  }
}
