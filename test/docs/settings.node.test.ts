// The drift checks of docs/settings.md: every setting documented, the committed page the one the schemas generate
// (test/support/settings-page.ts; only `npm run docs:settings` writes it), and every variable the code reads outside
// the schemas listed on it.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { envDurationMs } from "../../src/shared/settings";
import {
  allTables,
  envReadsIn,
  type Node,
  renderSettingsPage,
  settingOf,
  settingsPagePath,
  workerTables,
} from "../support/settings-page";

describe("docs/settings.md", () => {
  it("keeps a helper's kind and default when the schema adds metadata of its own", () => {
    const field = envDurationMs("10s").meta({ alias: "Y" }) as unknown as Node;
    expect(settingOf("X", field, "How long.")).toMatchObject({
      kind: "duration",
      default: "10s",
      alias: "Y",
      description: "How long.",
    });
  });

  it("finds no meaning on the Worker's schemas: each lives in its *-meanings.ts module, outside the bundle", () => {
    const onSchemas = workerTables.flatMap((table) => table.settings.filter((setting) => setting.meaningOnSchema));
    expect(onSchemas.map((setting) => setting.name)).toEqual([]);
  });

  it("documents every setting: a kind and a meaning, or the setting it is an alias of", () => {
    const undocumented: string[] = [];
    for (const table of allTables) {
      const names = new Set(table.settings.map((setting) => setting.name));
      for (const setting of table.settings) {
        if (!setting.kind) undocumented.push(`${setting.name}: no kind`);
        if (setting.aliasOf ? !names.has(setting.aliasOf) : !setting.description.trim())
          undocumented.push(`${setting.name}: no meaning`);
      }
    }
    expect(undocumented).toEqual([]);
  });

  it("is the page the schemas generate", () => {
    const generated = renderSettingsPage();
    const current = readFileSync(settingsPagePath, "utf8");
    expect(current === generated, "docs/settings.md is out of date: run `npm run docs:settings`").toBe(true);
  });

  it("lists every variable the code reads outside the schemas", () => {
    const page = readFileSync(settingsPagePath, "utf8");
    const missing = [...envReadsIn(["src", "durable-objects", "grpc-gateway", "haproxy-agent"])].filter(
      (name) => !page.includes(`\`${name}\``),
    );
    expect(missing, "read by the code but not in docs/settings.md").toEqual([]);
  });
});
