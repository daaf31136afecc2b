#!/usr/bin/env node
// Builds the web console (console/, served at /console) into the Worker's static assets, assets/console/ (git-ignored):
// one script bundled by esbuild with Preact, htm and uPlot from node_modules, one style sheet, the page. Run by
// wrangler.toml's [build] command; a file already up to date is left alone, so that `wrangler dev` does not reload
// for nothing.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { buildSync } from "esbuild";

const root = path.join(import.meta.dirname, "..");
const source = path.join(root, "console");
const target = path.join(root, "assets", "console");
const uplotCss = path.join(path.dirname(createRequire(import.meta.url).resolve("uplot")), "uPlot.min.css");

/** @param {string} file */
const contents = (file) => {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
};

/**
 * Writes the file unless it already holds exactly `data`.
 * @param {string} name
 * @param {string | Uint8Array} data
 */
const write = (name, data) => {
  const to = path.join(target, name);
  const bytes = Buffer.from(data);
  if (!contents(to)?.equals(bytes)) writeFileSync(to, bytes);
};

const script = buildSync({
  entryPoints: [path.join(source, "main.ts")],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2022",
  legalComments: "none",
  write: false,
  logLevel: "warning",
});

mkdirSync(target, { recursive: true });
write("console.js", script.outputFiles[0].contents);
write("console.css", `${readFileSync(uplotCss, "utf8")}\n${readFileSync(path.join(source, "console.css"), "utf8")}`);
write("index.html", readFileSync(path.join(source, "index.html")));
write("favicon.svg", readFileSync(path.join(source, "favicon.svg")));
// The glossary the pages link for their few words of jargon, as plain text on the same origin.
write("glossary.txt", readFileSync(path.join(root, "docs", "glossary.md")));
