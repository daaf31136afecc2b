// /docs in a real browser against `wrangler dev`: Debian's chromium (Playwright's own browser download is out of
// reach here), driven by playwright-core, renders every operation of the three services with Swagger UI from the
// Worker's static assets, and the page requests nothing from another origin.
import { spawnSync } from "node:child_process";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gotoWithRetry } from "../support/page-load";
import { requireBinary } from "../support/system-programs.mjs";
import { getWithRetry, startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";

let server: DevServer;
let browser: Browser;

/** The program's absolute path: Playwright does not search PATH. */
function binaryPath(name: string): string {
  requireBinary(name);
  return spawnSync("sh", ["-c", 'command -v "$1"', "sh", name], { encoding: "utf8" }).stdout.trim();
}

beforeAll(async () => {
  const executablePath = binaryPath("chromium");
  server = await startWranglerDev({}, { name: "docs browser" });
  // Chromium's sandbox refuses to start as root.
  browser = await chromium.launch({ executablePath, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("/docs in chromium", () => {
  it("shows every operation of the three services, loading only the Worker's own files", async () => {
    const document = (await (await getWithRetry(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string; tags: string[] }>>;
    };
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
    const page = await browser.newPage();
    const requested: string[] = [];
    const failed: string[] = [];
    const consoleErrors: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    page.on("response", (response) => {
      if (!response.ok()) failed.push(`${response.status()} ${response.url()}`);
    });
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });

    await gotoWithRetry(page, `${server.url}/docs`);
    // Swagger UI lists each operation as an element with the id operations-<tag>-<operationId>.
    await page
      .locator(".opblock")
      .nth(operations.length - 1)
      .waitFor({ timeout: 30_000 });
    const shown = await page.$$eval(".opblock", (blocks) => blocks.map((block) => block.id));
    expect(shown.sort()).toEqual(
      operations.map((operation) => `operations-${operation.tags[0]}-${operation.operationId}`).sort(),
    );
    for (const [tag, id, text] of [
      ["projects", "listProjects", "/projects"],
      ["news", "searchArticles", "/search"],
      ["ratelimit", "shouldRateLimit", "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit"],
    ]) {
      expect(await page.locator(`#operations-${tag}-${id} .opblock-summary-path`).innerText()).toBe(text);
    }

    const origin = new URL(server.url).origin;
    expect(requested.filter((url) => new URL(url).origin !== origin)).toEqual([]);
    expect(requested.map((url) => new URL(url).pathname)).toEqual(
      expect.arrayContaining([
        "/docs",
        "/swagger-ui/swagger-ui.css",
        "/swagger-ui/swagger-ui-bundle.js",
        "/docs/swagger-initializer.js",
        "/openapi.json",
      ]),
    );
    expect(failed).toEqual([]);
    // A Content-Security-Policy refusal shows up here too.
    expect(consoleErrors).toEqual([]);
    await page.close();
  });

  it("fills in each request body and path parameter with the document's example at Try it out", async () => {
    type Operation = {
      operationId: string;
      tags: string[];
      parameters?: { name: string; in: string; example?: string }[];
      requestBody?: { content: Record<string, { example?: unknown }> };
    };
    const document = (await (await getWithRetry(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    const withBody = Object.values(document.paths)
      .flatMap((methods) => Object.values(methods))
      .filter((operation) => operation.requestBody);
    const page = await browser.newPage();
    await gotoWithRetry(page, `${server.url}/docs`);
    const shown = [];
    const expected = [];
    for (const operation of withBody) {
      const block = page.locator(`#operations-${operation.tags[0]}-${operation.operationId}`);
      await block.locator(".opblock-summary").click();
      await block.locator(".try-out__btn").click();
      const body = await block.locator("textarea.body-param__text").inputValue();
      const path = await block
        .locator("tr[data-param-in=path] input")
        .evaluateAll((inputs: { placeholder: string; value: string }[]) =>
          inputs.map((input) => [input.placeholder, input.value]),
        );
      // Swagger UI shows the first media type's example: JSON pretty-printed, a text body (YAML) as it is.
      const [example] = Object.values(operation.requestBody!.content).map((media) => media.example);
      const shownBody = typeof example === "string" ? body : JSON.parse(body);
      shown.push({ id: operation.operationId, body: shownBody, path: Object.fromEntries(path) });
      const pathExamples = (operation.parameters ?? []).filter((parameter) => parameter.in === "path");
      expected.push({
        id: operation.operationId,
        body: example,
        path: Object.fromEntries(pathExamples.map((parameter) => [parameter.name, parameter.example ?? ""])),
      });
      // Closed again: Swagger UI re-renders every open operation at each click, so that open ones slow all the rest.
      await block.locator(".opblock-summary").click();
    }
    expect(shown).toEqual(expected);
    await page.close();
  });
});
