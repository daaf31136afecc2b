// The settings check `npm start` runs before it starts anything (scripts/start/settings.mjs bundles this file for
// Node): each service's settings schema applied to the env the Worker would see, every problem named. It imports the
// schemas only, never a Workers module, so it runs in plain Node.
import { JobSettings } from "./jobs/settings";
import { NewsSettings } from "./news/settings";
import { ProxySettings } from "./proxy/settings";
import { CounterStoreSettings } from "./ratelimit/counter-store-settings";
import { RateLimitSettings } from "./ratelimit/settings";

/** One variable that does not pass its service's schema, with the schema's message (what is allowed). */
export interface SettingProblem {
  setting: string;
  message: string;
}

interface Schema {
  safeParse(env: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } };
}

const SCHEMAS: [service: string, schema: Schema][] = [
  ["proxy", ProxySettings],
  ["news", NewsSettings],
  ["ratelimit", RateLimitSettings],
  ["ratelimit", CounterStoreSettings],
  ["jobs", JobSettings],
];

/** The problems of every schema with this env, each variable once (two schemas may read the same one). */
export function settingsProblems(env: Record<string, unknown>): SettingProblem[] {
  const problems = new Map<string, SettingProblem>();
  for (const [service, schema] of SCHEMAS) {
    const parsed = schema.safeParse(env);
    for (const issue of parsed.error?.issues ?? []) {
      const setting = issue.path.map(String).join(".") || `(${service} settings)`;
      problems.set(`${setting}\n${issue.message}`, { setting, message: issue.message });
    }
  }
  return [...problems.values()];
}
