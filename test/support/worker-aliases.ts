// The module aliases of wrangler.toml ([alias]) as Vite aliases, so that tests run the modules the deployed bundle
// does (wrangler applies them when it bundles; vitest-pool-workers does not).
import path from "node:path";
import { unstable_readConfig } from "wrangler";

const root = path.join(import.meta.dirname, "..", "..");
const alias: Record<string, string> = unstable_readConfig({ config: path.join(root, "wrangler.toml") }).alias ?? {};

/** Exact specifiers only, as wrangler matches them ("zod" but not "zod/v4"). */
export const workerAliases = Object.entries(alias).map(([specifier, target]) => ({
  find: new RegExp(`^${specifier.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`),
  replacement: path.resolve(root, target),
}));
