// The web console's operator and rate-limit pages in a real browser against `wrangler dev` (chromium through
// playwright-core): a generation's diff and the rollback, the audit log listing both changes, every operator page
// free of serious accessibility problems, and the rate-limit charts drawing points after traffic. Every request the
// pages make goes to the Worker's own origin.
import { describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import {
  ADMIN,
  clickToWrite,
  useConsoleStand,
  RATELIMIT_TOKEN,
  expectOnlyOwnOrigin,
  screenshot,
  seriousViolations,
  signIn,
  tenantProject,
  visit,
  watchedPage,
} from "../support/console-browser";
import { gotoWithRetry } from "../support/page-load";

let browser: Browser;
let origin: string;
useConsoleStand("console operator", { HAPROXY_AGENT_URL: "" }, (stand) => ({ browser, origin } = stand));

describe("the operator's pages", () => {
  it("shows the new version's diff after a generation, rolls back to the one before, and audits both", async () => {
    const { label, containerId, admin } = await tenantProject(origin, "op");
    expect((await admin("GET", "/admin/gensynchaprx")).status).toBe(200);
    const before = (await admin("GET", "/admin/haproxy/versions")).body[0].version as number;
    const added = await admin("POST", `/backends/${label}`, {
      label: "shop",
      port: 8080,
      backendContainers: [{ containerId }],
    });
    expect(added.status).toBe(200);
    const backendId = added.body.payload.value;

    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, ADMIN.username, ADMIN.password);
    await visit(page, "haproxy", "HAProxy versions");
    await page.getByRole("link", { name: `Version ${before}` }).waitFor();
    await page.getByRole("button", { name: "Generate a new version now" }).click();
    await page.getByText(`WARN: HAPROXY_AGENT_URL is not set: version ${before + 1} is stored`).waitFor();
    const diff = page.getByRole("region", { name: `Version ${before + 1}` });
    await diff.getByRole("heading", { name: `Version ${before + 1}, compared with version ${before}` }).waitFor();
    const cfg = diff.locator("figure", { hasText: "haproxy.cfg" });
    expect(await cfg.locator(".diff-added").allInnerTexts()).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`# project ${label}: backend shop`),
        expect.stringContaining(`backend ${label}_${backendId}_shop`),
      ]),
    );
    expect(await cfg.locator(".diff-removed").count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(cfg, "version-diff");

    const row = page.getByRole("row", { name: new RegExp(`^Version ${before} `) });
    await row.getByRole("button", { name: `Roll back to version ${before}…` }).click();
    const confirm = page.getByRole("alertdialog", { name: "Confirm the rollback" });
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page.locator("table", { has: confirm }), "rollback-confirm");
    await clickToWrite(origin, confirm.getByRole("button", { name: `Yes, roll back to version ${before}` }));
    await page.getByText(`INFO: version ${before + 2} restores version ${before}`).waitFor();
    const versions = (await admin("GET", "/admin/haproxy/versions")).body;
    expect(versions[0]).toMatchObject({ version: before + 2, restoredFrom: before, status: "active" });

    await visit(page, "audit", "Audit log");
    await page.getByLabel("User").fill(ADMIN.username);
    await page.getByRole("button", { name: "Show" }).click();
    const requests = page.locator("tbody td:nth-child(3)");
    await page.getByText(`POST /admin/haproxy/versions/${before}/activate`).waitFor();
    expect(await requests.allInnerTexts()).toEqual(
      expect.arrayContaining([`POST /backends/${label}`, `POST /admin/haproxy/versions/${before}/activate`]),
    );
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "audit");
    await expectOnlyOwnOrigin(watched, origin);
  });

  it("lists job runs and shows one run's state and output", async () => {
    const { admin } = await tenantProject(origin, "jb");
    const warnings = (await admin("GET", "/admin/gensynchaprx")).body as string[];
    const [run] = (await admin("GET", "/admin/jobs?kind=gensynchaprx&limit=1")).body;
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, ADMIN.username, ADMIN.password);
    await visit(page, "jobs", "Job runs");
    await page.getByRole("link", { name: `Run ${run.id}`, exact: true }).click();
    const shown = page.getByRole("region", { name: `Run ${run.id}` });
    await shown.getByText("succeeded").waitFor();
    expect(await shown.locator("dd").first().innerText()).toBe("gensynchaprx");
    expect(await shown.getByRole("list", { name: "Warnings" }).locator("li").allInnerTexts()).toEqual(warnings);
    expect(await seriousViolations(page)).toEqual([]);
    await expectOnlyOwnOrigin(watched, origin);
  });

  it("has no serious accessibility violation on any operator page; the preview names its problems", async () => {
    const { label, containerId, admin } = await tenantProject(origin, "ax");
    // A domain asking for a certificate none covers: a problem the preview names.
    const domainName = `${label}.example.org`;
    const backend = {
      label: "web",
      backendContainers: [{ containerId }],
      domainForwardings: [{ domainName, publicCaCertificate: true }],
    };
    expect((await admin("POST", `/backends/${label}`, backend)).status).toBe(200);
    // A backend with a domain and no container: a warning that is no problem.
    const idle = { label: "idle", domainForwardings: [{ domainName: `idle.${domainName}` }] };
    const idleAdded = await admin("POST", `/backends/${label}`, idle);
    expect(idleAdded.status).toBe(200);
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, ADMIN.username, ADMIN.password);
    const pages = [
      ["projects", "Projects", ""],
      [`projects/${label}`, `Project ${label}`, "Change the project"],
      ["hosts", "Hosts", "The machines containers run on"],
      ["users", "Users", "API users"],
      ["sshproxy", "SSH proxy versions", "Stored versions, newest first"],
      ["preview", "Next generation", "Problems"],
      ["status", "Load balancers", "Load balancers"],
      ["jobs", "Job runs", "The latest runs, newest first"],
    ];
    const found: Record<string, string[]> = {};
    for (const [route, heading, loaded] of pages) {
      await visit(page, route, heading);
      if (loaded) await page.getByText(loaded, { exact: true }).first().waitFor();
      found[route] = await seriousViolations(page);
      if (route === "preview" || route === "status") await screenshot(page, route);
    }
    expect(found).toEqual(Object.fromEntries(pages.map(([route]) => [route, []])));
    await visit(page, "preview", "Next generation");
    const problem = page
      .getByRole("region", { name: "HAProxy" })
      .getByRole("list", { name: "Problems" })
      .getByRole("listitem")
      .filter({ hasText: domainName });
    expect(await problem.innerText()).toMatch(
      new RegExp(
        `^${label}/web \\(certificate\\): ${domainName.replaceAll(".", "\\.")} .* asks for a public CA certificate, but none covers it: it is served over http only$`,
      ),
    );
    // Said once: as a problem, not again among the warnings, which keep what is no problem.
    const warnings = page.getByRole("region", { name: "HAProxy" }).getByRole("list", { name: "Warnings" });
    expect(await warnings.getByRole("listitem").filter({ hasText: label }).allInnerTexts()).toEqual([
      `WARN: backend ${label}_${idleAdded.body.payload.value}_idle has no containers: its domains are not routed (idle.${domainName})`,
    ]);
    await expectOnlyOwnOrigin(watched, origin);
  });
});

describe("the rate-limit pages", () => {
  it("asks for the token, shows the rules tree, and draws points after traffic", async () => {
    const watched = await watchedPage(browser);
    const { page } = watched;
    await gotoWithRetry(page, `${origin}/console/#/ratelimit`);
    await page.getByLabel("Admin token").fill("wrong-token");
    await page.getByRole("button", { name: "Use this token" }).click();
    await page.getByText("The token is wrong.").waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel("Admin token").fill(RATELIMIT_TOKEN);
    await page.getByRole("button", { name: "Use this token" }).click();
    const tree = page.locator(".tree");
    await tree.getByText("remote_address").waitFor();
    expect(await tree.locator(":scope > ul > li > .rule-name").allInnerTexts()).toEqual(["example"]);

    // Traffic: the bundled example's rule for client addresses, 10 a minute, sent 14 times.
    for (let index = 0; index < 14; index++) {
      const body = { domain: "example", descriptors: [{ entries: [{ key: "remote_address", value: "192.0.2.7" }] }] };
      await fetch(`${origin}/json`, { method: "POST", body: JSON.stringify(body) });
    }
    const overall = page.locator("figure.chart", { hasText: "Decisions a second, overall" });
    const highest = async () => {
      const text = await overall.locator(".chart-text").innerText();
      const match = /Highest: decisions ([\d.]+), over the limit ([\d.]+)\./.exec(text);
      return match ? { decisions: Number(match[1]) > 0, over: Number(match[2]) > 0 } : text;
    };
    // Some reading counted the 14 decisions, 4 of them over the limit.
    await expect.poll(highest, { timeout: 20_000 }).toEqual({ decisions: true, over: true });
    // A few more readings, for the picture docs/console.md shows.
    await expect
      .poll(async () => Number(await overall.getAttribute("data-points")), { timeout: 20_000 })
      .toBeGreaterThanOrEqual(4);
    const perRule = page.locator("figure.chart", { hasText: "Decisions a second, per rule" });
    expect(await perRule.locator(".chart-text").innerText()).toMatch(/Highest: example\.remote_address [1-9]/);
    expect(await overall.locator("canvas").count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page.getByRole("region", { name: "Live charts" }), "ratelimit-charts");
    await screenshot(tree, "ratelimit-rules");

    // The rule counts a minute, which the waits above may have ended: its 10 hits are sent again for another address
    // just before the form's, and not in the minute's last seconds.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    for (let index = 0; index < 10; index++) {
      const body = { domain: "example", descriptors: [{ entries: [{ key: "remote_address", value: "192.0.2.8" }] }] };
      expect((await fetch(`${origin}/json`, { method: "POST", body: JSON.stringify(body) })).status).toBe(200);
    }
    await page.getByLabel("Domain").fill("example");
    await page.getByLabel("Key", { exact: true }).fill("remote_address");
    await page.getByLabel("Value (optional)").fill("192.0.2.8");
    await clickToWrite(origin, page.getByRole("button", { name: "Send" }));
    const decision = page.getByRole("region", { name: "Decision" });
    await decision.getByText("Status 429: OVER_LIMIT").waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await expectOnlyOwnOrigin(watched, origin, ["401 /rlconfig/files", "429 /json"]);
  });
});
