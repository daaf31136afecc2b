#!/usr/bin/env node
// Fills assets/swagger-ui/ (the Worker's static assets, git-ignored) with the Swagger UI files /docs loads, from
// node_modules/swagger-ui-dist: the reference then works with no internet, and its 1.7 MB bundle stays out of the
// Worker script. Run by wrangler.toml's [build] command; a file already up to date is left alone, so that
// `wrangler dev` does not reload for nothing.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const root = path.join(import.meta.dirname, "..");
const source = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const target = path.join(root, "assets", "swagger-ui");

/** What the page at /docs (src/api-docs.ts) loads, and the licence that goes with the bundle. */
const FILES = ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png", "LICENSE", "NOTICE"];

/** @param {string} file */
const contents = (file) => {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
};

mkdirSync(target, { recursive: true });
for (const name of FILES) {
  const from = path.join(source, name);
  const to = path.join(target, name);
  if (!contents(to)?.equals(readFileSync(from))) copyFileSync(from, to);
}
