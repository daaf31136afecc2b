// The web console's end-to-end tests' tools: Debian's chromium driven by playwright-core, each page watched for
// every request it makes (all must go to the Worker's own origin), axe-core run inside the page, the proxy API called
// from Node to build each test's state, and the screenshots docs/console.md shows.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { gotoWithRetry } from "./page-load";
import { root } from "./processes.mjs";
import { requireBinary } from "./system-programs.mjs";
import { refreshProxyConnection, startWranglerDev } from "./wrangler-dev.mjs";

export const ADMIN = { username: "admin", password: "local-admin-password" };
export const RATELIMIT_TOKEN = "local-ratelimit-admin-token";

/** Debian's chromium (Playwright does not search PATH); its sandbox refuses to start as root. */
export function launchChromium(): Promise<Browser> {
  requireBinary("chromium");
  const executablePath = spawnSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).stdout.trim();
  return chromium.launch({ executablePath, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });
}

/** A Worker signed into by the console's credentials, and a chromium; `stop` ends both. */
export interface ConsoleStand {
  origin: string;
  browser: Browser;
  stop(): Promise<void>;
}

/** Starts `wrangler dev` with the console's credentials and no slave agents (plus `vars`), and a chromium. */
export async function startConsoleStand(name: string, vars: Record<string, string>): Promise<ConsoleStand> {
  const server = await startWranglerDev(
    {
      PROXY_ADMIN_USERNAME: ADMIN.username,
      PROXY_ADMIN_PASSWORD: ADMIN.password,
      RATELIMIT_ADMIN_TOKEN: RATELIMIT_TOKEN,
      SLAVE_AGENT_URLS: "",
      ...vars,
    },
    { name },
  );
  const browser = await launchChromium().catch(async (error) => {
    await server.stop();
    throw error;
  });
  return {
    origin: new URL(server.url).origin,
    browser,
    stop: async () => {
      await browser.close();
      await server.stop();
    },
  };
}

/**
 * A stand for the whole of one suite: started before its tests (`started` receives it, to keep its browser and
 * origin) and stopped after them.
 */
export function useConsoleStand(name: string, vars: Record<string, string>, started: (stand: ConsoleStand) => void) {
  let stand: ConsoleStand | undefined;
  beforeAll(async () => {
    stand = await startConsoleStand(name, vars);
    started(stand);
  });
  afterAll(() => stand?.stop());
}

/** A page and what it did: every request's URL, every answer that was not 2xx/3xx, script errors. */
export type Watched = { page: Page; requests: string[]; failed: string[]; errors: string[] };

export async function watchedPage(browser: Browser): Promise<Watched> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
  const watched: Watched = { page, requests: [], failed: [], errors: [] };
  page.on("request", (request) => watched.requests.push(request.url()));
  page.on("response", (response) => {
    if (response.status() >= 400) watched.failed.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
  page.on("pageerror", (error) => watched.errors.push(String(error)));
  // A refused script or style (Content-Security-Policy) is reported here; a 4xx answer is in `failed` instead.
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource"))
      watched.errors.push(message.text());
  });
  return watched;
}

/** Every request went to `origin`, no script error happened, and only the expected answers failed. */
export async function expectOnlyOwnOrigin(watched: Watched, origin: string, failed: string[] = []) {
  expect(watched.requests.length).toBeGreaterThan(0);
  expect(watched.requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
  expect(watched.errors).toEqual([]);
  expect(watched.failed.sort()).toEqual([...failed].sort());
  await watched.page.close();
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * axe-core's serious and critical violations on the page as it is now: none expected. The script goes in through
 * the DevTools protocol (page.evaluate), which the page's Content-Security-Policy does not govern.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(() =>
    (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ["violations"] }),
  );
  return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[])
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(
      (violation) =>
        `${violation.impact} ${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    );
}

const SHOTS = path.join(root, "docs", "console");

/** With CONSOLE_SCREENSHOTS=1, saves the page's visible part, or one part of it, as docs/console/<name>.png. */
export async function screenshot(what: Page | Locator, name: string) {
  if (process.env.CONSOLE_SCREENSHOTS !== "1") return;
  mkdirSync(SHOTS, { recursive: true });
  await what.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/** Opens the console (a load the proxy holds is tried again, see gotoWithRetry) and signs in with the credentials. */
export async function signIn(page: Page, origin: string, username: string, password: string) {
  await gotoWithRetry(page, `${origin}/console/`);
  await page.getByLabel("User name").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Projects" }).waitFor();
}

/**
 * Clicks a control that sends a write (POST or PUT), first giving wrangler dev's proxy a fresh connection to the Worker:
 * a write racing workerd's close of an idle connection is answered 503 (workers-sdk issue 14641), and the waits for
 * axe-core leave such idle spells between a page's requests.
 */
export async function clickToWrite(origin: string, control: Locator) {
  await refreshProxyConnection({ url: origin });
  await control.click();
}

/** Goes to one of the console's pages (the fragment), keeping the signed-in tab. */
export async function visit(page: Page, route: string, heading: string) {
  await page.evaluate((hash) => ((globalThis as any).location.hash = hash), `#/${route}`);
  await page.getByRole("heading", { name: heading, exact: true }).waitFor();
}

/** A proxy API call from Node with Basic credentials: status, parsed JSON, ETag. */
export async function proxyCall(
  origin: string,
  auth: { username: string; password: string },
  method: string,
  route: string,
  body?: unknown,
) {
  const response = await fetch(`${origin}${route}`, {
    method,
    headers: { Authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text && /json/.test(response.headers.get("Content-Type") ?? "") ? JSON.parse(text) : text,
    etag: response.headers.get("ETag"),
  };
}

let serial = 0;

/**
 * A project of its own for one test: the project, a host, a container on it, and a tenant whose pattern gives it the
 * project alone. Labels carry the test's `tag` and a counter, so that no two tests share anything.
 */
export async function tenantProject(origin: string, tag: string) {
  serial += 1;
  const label = `${tag}${serial}${Date.now() % 100000}`.slice(0, 32);
  const admin = (method: string, route: string, body?: unknown) => proxyCall(origin, ADMIN, method, route, body);
  // One 16-bit group of an address: unique per test of the run.
  const hex = (((serial * 7919 + Date.now()) % 0xfffe) + 1).toString(16);
  expect((await admin("POST", "/admin/projects", { label, fullname: `Project ${label}` })).status).toBe(200);
  const hostname = `${label}.hosts.example.net`;
  expect((await admin("POST", "/admin/hosts", { hostname, ipv6: `2001:db8:1::${hex}` })).status).toBe(200);
  const container = await admin("POST", `/containers/${label}`, { label: "web", hostname, ipv6: `2001:db8:2::${hex}` });
  expect(container.status).toBe(200);
  const tenant = { username: `${label}ops`, password: `${label}-password` };
  const user = await admin("POST", "/admin/apiusers", { ...tenant, projectPatterns: [label] });
  expect(user.status).toBe(200);
  return { label, tenant, containerId: container.body.payload.value as number, admin };
}
