// docs/proxy.md's first-project walkthrough, run as written: every curl of its ```sh blocks, in order, with the real
// curl against a wrangler dev started with .dev.vars.example's values (what `npm start` runs with), each answering 2xx
// and, where the page shows the answer (`# → ...`), exactly that answer.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBinary } from "../support/system-programs.mjs";
import { startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";
import { root } from "../support/proxy-haproxy-agent";

/** Where the page's commands point: `npm start`'s default origin. */
const DOCUMENTED_ORIGIN = "http://localhost:8787";
const HEADING = "## First project, step by step";

interface Step {
  command: string;
  /** The answer the page shows, when it shows one. */
  answer?: string;
}

/** The commands of the ```sh blocks between the walkthrough's heading and the next heading of its level. */
function walkthroughSteps(markdown: string): Step[] {
  const start = markdown.indexOf(`\n${HEADING}\n`);
  if (start < 0) throw new Error(`docs/proxy.md has no "${HEADING}" section`);
  const end = markdown.indexOf("\n## ", start + HEADING.length + 2);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  const steps: Step[] = [];
  for (const [, block] of section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    // A trailing backslash continues the command; so does a line inside an open single-quoted string.
    let pending = "";
    for (const line of block.split("\n")) {
      if (pending === "" && line.startsWith("# → ")) {
        steps.at(-1)!.answer = line.slice("# → ".length);
        continue;
      }
      if (pending === "" && (line.trim() === "" || line.startsWith("#"))) continue;
      pending += pending === "" ? line : `\n${line}`;
      const quotes = (pending.match(/'/g) ?? []).length;
      if (pending.endsWith("\\") || quotes % 2 === 1) continue;
      steps.push({ command: pending });
      pending = "";
    }
    if (pending !== "") throw new Error(`an unfinished command in the walkthrough: ${pending}`);
  }
  return steps;
}

const steps = walkthroughSteps(readFileSync(path.join(root, "docs", "proxy.md"), "utf8"));

/** Runs one command as a shell would, curl told to be quiet and to print the status last. */
function run(command: string, origin: string): { status: number; body: string } {
  if (!command.startsWith("curl ")) throw new Error(`not a curl command: ${command}`);
  const local = `curl -sS -w '\\n%{http_code}' ${command.slice("curl ".length)}`.replaceAll(DOCUMENTED_ORIGIN, origin);
  const result = spawnSync("sh", ["-c", local], { encoding: "utf8", timeout: 60_000 });
  if (result.status !== 0) throw new Error(`curl failed (${result.status}): ${result.stderr}`);
  const cut = result.stdout.lastIndexOf("\n");
  return { status: Number(result.stdout.slice(cut + 1)), body: result.stdout.slice(0, cut) };
}

let server: DevServer;

beforeAll(async () => {
  requireBinary("curl");
  const documented = parseEnv(readFileSync(path.join(root, ".dev.vars.example"), "utf8"));
  // A developer's own .dev.vars may name agents; the page's answers are those of the example, which names none.
  server = await startWranglerDev({ ...documented, HAPROXY_AGENT_URL: "", SLAVE_AGENT_URLS: "" });
});

afterAll(async () => {
  await server?.stop();
});

describe("docs/proxy.md's first-project walkthrough", () => {
  it("has a curl for each step the page promises, against the documented origin", () => {
    const paths = steps.map(({ command }) => /http:\/\/localhost:8787(\/\S*)/.exec(command)?.[1]);
    expect(paths).toEqual([
      "/admin/projects",
      "/admin/hosts",
      "/containers/shop",
      "/backends/shop",
      "/domains/massupdate",
      "/admin/apiusers",
      "/projects",
      "/admin/gensynchaprx",
      "/domains/massupdate",
      "/admin/haproxy/preview",
      "/admin/gensynchaprx",
      "/admin/haproxy/versions/1/activate",
    ]);
  });

  // One test per command, in the page's order: each builds on the state the ones before it left.
  for (const [index, step] of steps.entries()) {
    it(`step ${index + 1}: ${step.command.split("\n")[0]}`, () => {
      const { status, body } = run(step.command, server.url);
      expect({ status: status >= 200 && status < 300 ? "2xx" : status, body }).toMatchObject({
        status: "2xx",
        ...(step.answer !== undefined && { body: step.answer }),
      });
      // What the page says of the preview's answer, too long to show.
      if (step.command.includes("/admin/haproxy/preview")) {
        const preview = JSON.parse(body);
        expect({ changed: preview.changed, problems: preview.problems }).toEqual({ changed: true, problems: [] });
        expect(preview.diff.split("\n").filter((line: string) => /^[-+][^-+]/.test(line))).toEqual([
          "+api.shop.example shop_1_www",
        ]);
      }
    });
  }
});
