#!/usr/bin/env node
// `npm run docs:openapi`: writes docs/openapi.json, the document the Worker serves at /openapi.json, as the Worker
// builds it under `wrangler dev` (test/openapi.test.ts fails while the committed file differs from the served one).
import { writeFileSync } from "node:fs";
import path from "node:path";
import * as prettier from "prettier";
import { root, stopAll, stopAllOnSignals } from "../test/support/processes.mjs";
import { startWranglerDev } from "../test/support/wrangler-dev.mjs";

stopAllOnSignals();

const output = path.join(root, "docs", "openapi.json");

try {
  const server = await startWranglerDev({}, { name: "docs:openapi", readyPath: "/openapi.json", migrate: false });
  const response = await fetch(`${server.url}/openapi.json`);
  if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}: ${await response.text()}`);
  const document = await response.json();
  // Formatted as `prettier --check .` expects it, so that the lint passes on the file as written.
  const options = (await prettier.resolveConfig(output)) ?? {};
  writeFileSync(output, await prettier.format(JSON.stringify(document), { ...options, filepath: output }));
  console.log(`wrote ${path.relative(root, output)}: ${Object.keys(document.paths).length} paths`);
} finally {
  await stopAll();
}
