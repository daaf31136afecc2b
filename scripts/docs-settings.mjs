// `npm run docs:settings`: writes docs/settings.md from the settings schemas. The generator is TypeScript importing the
// services' settings modules, so it runs through vitest's module runner with the core suite's config (its aliases);
// test/docs/settings.node.test.ts only compares the committed page with what this writes.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createVitest } from "vitest/node";

const root = path.join(import.meta.dirname, "..");
const vitest = await createVitest("test", { config: path.join(root, "test", "vitest.core.config.ts"), watch: false });
try {
  /** @type {{ renderSettingsPage(): string, settingsPagePath: string }} */
  const page = await vitest.import(path.join(root, "test", "support", "settings-page.ts"));
  writeFileSync(page.settingsPagePath, page.renderSettingsPage());
} finally {
  await vitest.close();
}
