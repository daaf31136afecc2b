// The settings check `npm start` runs before it starts anything (scripts/start/settings.mjs bundles this file for
// Node): each service's settings schema applied to the env the Worker would see, then the checks of whole settings
// the Worker makes on its first request (the counter store's addresses, the statistics, the log settings), every
// problem named. It imports no Workers module, so it runs in plain Node.
import { JobSettings } from "./jobs/settings";
import { NewsSettings } from "./news/settings";
import { ProxySettings } from "./proxy/settings";
import { CounterStoreSettings, storeAliasOf } from "./ratelimit/counter-store-settings";
import { RateLimitSettings } from "./ratelimit/settings";
import { resolveStatsConfig } from "./ratelimit/stats/config";
import { mapperOfSetting } from "./ratelimit/stats/mapper-setting";
import { storeChoiceOf } from "./ratelimit/stores/options";
import { DiagnosticsSettings } from "./shared/d1-usage";
import { readLogSettings } from "./shared/log";
import { SettingsError } from "./shared/settings";

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
  ["diagnostics", DiagnosticsSettings],
];

type Env = Record<string, unknown>;

/** What the Worker checks beyond the schemas, on settings its schemas accept; each returns what it refuses. */
const WHOLE_SETTINGS_CHECKS: ((env: Env) => SettingProblem[])[] = [
  (env) => {
    const parsed = CounterStoreSettings.safeParse(env);
    return parsed.success ? refusals(() => storeChoiceOf(parsed.data)) : [];
  },
  (env) => {
    const parsed = RateLimitSettings.safeParse(env);
    if (!parsed.success) return [];
    return refusals(() => {
      const stats = resolveStatsConfig(parsed.data, env);
      if (stats.mapper) mapperOfSetting(stats.mapper);
    });
  },
  // The Worker keeps the default for a malformed log setting (logging must never fail); a start still refuses it.
  (env) => readLogSettings(env).problems,
];

/** The problems of every schema with this env, each variable once (two schemas may read the same one). */
export function settingsProblems(env: Env): SettingProblem[] {
  const problems = new Map<string, SettingProblem>();
  const add = ({ setting, message }: SettingProblem) => {
    const named = { setting: nameAsSet(setting, env), message };
    problems.set(`${named.setting}\n${message}`, named);
  };
  for (const [service, schema] of SCHEMAS) {
    const parsed = schema.safeParse(env);
    for (const issue of parsed.error?.issues ?? []) {
      add({ setting: issue.path.map(String).join(".") || `(${service} settings)`, message: issue.message });
    }
  }
  for (const check of WHOLE_SETTINGS_CHECKS) check(env).forEach(add);
  return [...problems.values()];
}

/** The SettingsError `check` throws as a problem: the setting it names as at fault, and what it says. */
function refusals(check: () => void): SettingProblem[] {
  try {
    check();
    return [];
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    const said = error.message.replace(/^\w+ settings are invalid: /, "");
    const setting = error.setting ?? "(ratelimit settings)";
    return [{ setting, message: said.startsWith(`${setting}: `) ? said.slice(setting.length + 2) : said }];
  }
}

/** The variable the operator set: the reference's alias (REDIS_*, MEMCACHE_*) when only that one holds the value. */
function nameAsSet(setting: string, env: Env): string {
  const alias = storeAliasOf(setting);
  const unset = (name: string) => env[name] === undefined || env[name] === "";
  return alias && unset(setting) && !unset(alias) ? alias : setting;
}
