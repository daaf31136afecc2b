// The README, CONTRIBUTING.md and every page of docs/: the README stays short, and every relative link (and its
// #anchor) resolves.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.join(import.meta.dirname, "..", "..");
const pages = [
  "README.md",
  "CONTRIBUTING.md",
  ...readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{Letter}\p{Number} -]/gu, "")
    .replace(/ /g, "-");

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) => slug(heading)));
}

/** Markdown links outside code blocks and code spans. */
function linksOf(file: string): string[] {
  const text = readFileSync(file, "utf8")
    .replace(/```[\s\S]*?```/g, "")
    .replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map(([, target]) => target);
}

describe("documentation", () => {
  it("keeps the README at 200 lines or fewer", () => {
    expect(readFileSync(path.join(root, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(200);
  });

  it.each(pages)("%s: every relative link and anchor resolves", (page) => {
    const broken: string[] = [];
    for (const link of linksOf(path.join(root, page))) {
      if (/^[a-z]+:/i.test(link)) continue;
      const [target, anchor] = link.split("#");
      const file = target === "" ? path.join(root, page) : path.join(root, path.dirname(page), target);
      if (!existsSync(file)) broken.push(`${link}: no such file`);
      else if (anchor && file.endsWith(".md") && !anchorsOf(file).has(anchor)) broken.push(`${link}: no such heading`);
    }
    expect(broken).toEqual([]);
  });
});
