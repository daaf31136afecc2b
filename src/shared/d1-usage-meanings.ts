// The meaning of D1_USAGE_HEADER (src/shared/d1-usage.ts), for docs/settings.md only: the Worker never imports this
// module (.dependency-cruiser.cjs), so the text stays out of its bundle.
import type { DiagnosticsSettings } from "./d1-usage";
import { type SettingMeanings, oneLine } from "./settings";

export const diagnosticsSettingMeanings: SettingMeanings<keyof typeof DiagnosticsSettings.shape> = {
  D1_USAGE_HEADER: oneLine`
    \`true\` counts the D1 work of every HTTP request and answers it in a \`Server-Timing\` header,
    \`d1;desc="calls=N statements=S rows_written=W rows_read=R unmetered=U"\`: round trips to D1 (a batch is one),
    the statements they ran, and the rows D1 reports written and read (\`meta.rows_written\`, \`meta.rows_read\`),
    which D1 gives for run(), all() and batches but not for raw() (drizzle's selects and \`returning()\`), first() or
    exec(): those are the unmetered statements. Work a request leaves to run after its answer (waitUntil, the queue)
    is not in it. For benchmarks (\`npm run bench:*\`): on, every caller reads the counts of its own requests; off,
    nothing is counted and no header is added.`,
};
