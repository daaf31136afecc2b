// The pure parts of `npm start` (scripts/start/): reading the options as wrangler's yargs does, when the news demo
// is turned on, the one /__scheduled call that runs the news ingestion, and the summary's news line.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliVars, optionValue, optionValues, wantsHelp } from "../../scripts/start/args.mjs";
import { NEWS_CRON, runNewsIngestion, wantsNewsDemo } from "../../scripts/start/news-demo.mjs";
import { summary } from "../../scripts/start/summary.mjs";

const root = path.join(import.meta.dirname, "..", "..");

describe("the options npm start reads", () => {
  it("reads --var as wrangler does: repeatable, greedy up to the next option, colons kept, the last one winning", () => {
    const args = ["--var", "A:1", "B:x:y", "--port", "9000", "--var=C:", "--var", "A:2", "--log-level", "log"];
    expect(cliVars(args)).toEqual({ A: "2", B: "x:y", C: "" });
  });

  it("takes one value of a single-value option, the last one given, in either spelling", () => {
    const args = ["--port", "9000", "extra", "--persist-to=/tmp/a", "-c", "other.toml", "--port=9001"];
    expect(optionValue(args, "--port")).toBe("9001");
    expect(optionValue(args, "--persist-to")).toBe("/tmp/a");
    expect(optionValue(args, "--config", { aliases: ["-c"] })).toBe("other.toml");
    expect(optionValue(args, "--ip")).toBeUndefined();
    expect(optionValues(["--env-file", "a", "b", "--x", "c"], "--env-file", { array: true })).toEqual(["a", "b"]);
  });

  it("sees -h and --help anywhere", () => {
    expect([["-h"], ["--port", "1", "--help"], ["--port", "-h"], ["--helpful"], []].map(wantsHelp)).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});

describe("the news demo", () => {
  it("is on only when no publisher and no NEWS_DEMO is set (empty counts as unset)", () => {
    expect(
      [
        {},
        { GUARDIAN_API_KEY: "", NYT_API_KEY: "", NEWS_FEEDS: "", NEWS_DEMO: "" },
        { GUARDIAN_API_KEY: "key" },
        { NYT_API_KEY: "key" },
        { NEWS_FEEDS: "https://feeds.example/rss" },
        { NEWS_DEMO: "false" },
        { NEWS_DEMO: "true" },
      ].map(wantsNewsDemo),
    ).toEqual([true, true, false, false, false, false, false]);
  });

  it("fires the news ingestion's own cron, as wrangler.toml and the job registry schedule it", () => {
    expect(NEWS_CRON).toBe("*/30 * * * *");
    expect(readFileSync(path.join(root, "wrangler.toml"), "utf8")).toContain(
      'crons = ["5 0 * * *", "*/30 * * * *", "* * * * *"]',
    );
    expect(readFileSync(path.join(root, "src", "job-registry.ts"), "utf8")).toContain(
      '"*/30 * * * *": [newsIngestRequests]',
    );
  });

  it("calls /__scheduled with that cron once, and says so when the Worker does not take it", async () => {
    const calls: string[] = [];
    let status = 200;
    const server = createServer((request, response) => {
      calls.push(`${request.method} ${request.url}`);
      response.writeHead(status).end("Ran scheduled event");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      expect(await runNewsIngestion(origin)).toBeUndefined();
      status = 500;
      expect(await runNewsIngestion(origin)).toBe(
        `npm start: the news ingestion did not start: ${origin}/__scheduled?cron=*/30+*+*+*+* answered 500`,
      );
      expect(calls).toEqual(["GET /__scheduled?cron=*/30+*+*+*+*", "GET /__scheduled?cron=*/30+*+*+*+*"]);
    } finally {
      server.close();
    }
  });

  it("is one line of the ready summary, only when on", () => {
    const state = {
      root: "/repo",
      devOrigin: "http://localhost:8787",
      gatewayState: { address: "0.0.0.0:8081" },
      gatewayValues: {},
      vars: { PROXY_ADMIN_USERNAME: "admin", MASTER_KEY: "local-master-key" },
      varsOrigin: "read from .dev.vars",
    };
    const newsLine = "  News         demo articles from a bundled sample (no publisher key set)";
    const on = summary({ ...state, newsDemo: true }).split("\n");
    expect(on.slice(0, 5)).toEqual([
      "",
      "npm start: ready",
      "  Proxy API    http://localhost:8787/projects  (admin: /admin/...; HTTP Basic)",
      "  News API     http://localhost:8787/news  (POST /auth with MASTER_KEY for a JWT)",
      newsLine,
    ]);
    expect(on).toContain(
      "  Console      http://localhost:8787/console/  (the proxy credentials; RATELIMIT_ADMIN_TOKEN for its rate limit pages)",
    );
    const off = summary({ ...state, newsDemo: false }).split("\n");
    expect(off).not.toContain(newsLine);
    expect(off.length).toBe(on.length - 1);
  });
});
