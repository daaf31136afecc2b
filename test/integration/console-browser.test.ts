// The web console at /console in a real browser against `wrangler dev`: Debian's chromium through playwright-core
// signs in as a tenant and as the operator and goes through the console's pages, checking what they show against
// the API, that every request goes to the Worker's own origin, and that axe-core finds no serious or critical
// violation on any page.
import { describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import {
  ADMIN,
  clickToWrite,
  useConsoleStand,
  expectOnlyOwnOrigin,
  screenshot,
  seriousViolations,
  signIn,
  tenantProject,
  visit,
  watchedPage,
} from "../support/console-browser";
import { gotoWithRetry } from "../support/page-load";
import { getWithRetry } from "../support/wrangler-dev.mjs";

let browser: Browser;
let origin: string;
// No agent: gensynchaprx stores each version and says no load balancer was updated.
useConsoleStand("console browser", { HAPROXY_AGENT_URL: "" }, (stand) => ({ browser, origin } = stand));

describe("/console as served", () => {
  it("answers the page with a Content-Security-Policy allowing only the Worker's own origin", async () => {
    const response = await getWithRetry(`${origin}/console/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Security-Policy")).toBe(
      "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    const page = await response.text();
    // No inline script: the one script is a file of the origin.
    expect(page.match(/<script[^>]*>/g)).toEqual(['<script src="/console/console.js" defer>']);
    expect((await getWithRetry(`${origin}/console`, { redirect: "manual" })).headers.get("Location")).toBe("/console/");
  });
});

describe("the tenant's pages", () => {
  it("signs in, sees only their projects, is refused a params line beside the field, adds a backend", async () => {
    const { label, tenant, containerId } = await tenantProject(origin, "tn");
    const other = await tenantProject(origin, "tx");
    const watched = await watchedPage(browser);
    const { page } = watched;
    await gotoWithRetry(page, `${origin}/console/`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "sign-in");

    await signIn(page, origin, tenant.username, tenant.password);
    await page.getByRole("link", { name: label }).waitFor();
    expect(await page.locator("ul.projects li").allInnerTexts()).toEqual([label]);
    expect(await page.getByRole("link", { name: other.label }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    // htm drops a space that ends a line before an element: words and controls must still stand apart.
    expect(await page.locator("footer").innerText()).toBe(
      "Words used here are explained in the glossary; the APIs themselves are described at /docs.",
    );
    const who = await page.locator("p.who span").boundingBox();
    const signOut = await page.locator("p.who").getByRole("button", { name: "Sign out" }).boundingBox();
    expect(signOut!.x - (who!.x + who!.width)).toBeGreaterThanOrEqual(8);

    await page.getByRole("link", { name: label }).click();
    await page.getByRole("heading", { name: `Project ${label}` }).waitFor();
    await page.getByText("No backend yet.").waitFor();
    await page.locator("#label").fill("api");
    await page.locator("#port").fill("8080");
    await page.locator("#params").fill("timeout server 30s\nfrontend evil");
    await page.locator("#containers").fill(`${containerId} check`);
    await clickToWrite(origin, page.getByRole("button", { name: "Check this change (dry run)" }).first());
    const refusal = page.locator("#params-error");
    await refusal.waitFor();
    expect(await refusal.innerText()).toBe('Refused: params line 2: "frontend" opens a new section');
    // The refusal is the field's description, and the field is marked invalid.
    expect(await page.locator("#params").getAttribute("aria-describedby")).toBe("params-hint params-error");
    expect(await page.locator("#params").getAttribute("aria-invalid")).toBe("true");
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page.locator("form", { has: page.locator("#params") }), "refused");

    await page.locator("#params").fill("timeout server 30s");
    await clickToWrite(origin, page.getByRole("button", { name: "Check this change (dry run)" }).first());
    const dryRun = page.getByRole("region", { name: "Dry run" });
    await dryRun.waitFor();
    expect(await dryRun.locator("figcaption").innerText()).toBe("backend api: 11 lines added, 0 removed");
    // The dry run stored nothing.
    expect((await other.admin("GET", `/projects/${label}`)).body.backends).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page.locator("form", { has: page.locator("#params") }), "dry-run");

    await clickToWrite(origin, page.getByRole("button", { name: "Apply" }));
    await page.getByText("Applied: backend api is stored (its number, backendId:").waitFor();
    await page.getByRole("rowheader", { name: "api" }).waitFor();
    const stored = (await other.admin("GET", `/projects/${label}`)).body.backends;
    expect(
      stored.map((b: any) => [
        b.label,
        b.port,
        b.params,
        b.backendContainers.map((l: any) => [l.containerId, l.params]),
      ]),
    ).toEqual([["api", 8080, "timeout server 30s", [[containerId, "check"]]]]);
    // The operator probe answers 403 for a tenant; the refused dry run 400.
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects", "400 /backends/" + label]);
  });

  it("puts an address already in use beside the container's address field, and stores nothing", async () => {
    const { label, tenant, admin } = await tenantProject(origin, "ta");
    const project = (await admin("GET", `/projects/${label}`)).body;
    const [web] = project.containers;
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, tenant.username, tenant.password);
    await page.getByRole("link", { name: label }).click();
    await page.getByRole("rowheader", { name: "web" }).waitFor();
    await page.locator("#container-label").fill("db");
    await page.locator("#container-hostname").fill(web.host.hostname);
    await page.locator("#container-ipv6").fill(web.ipv6);
    await clickToWrite(origin, page.getByRole("button", { name: "Check this change (dry run)" }).nth(1));
    const refusal = page.locator("#container-ipv6-error");
    await refusal.waitFor();
    expect(await refusal.innerText()).toBe(
      `Refused: Invalid container: address ${web.ipv6} is already used by another container`,
    );
    expect(await page.locator("#container-ipv6").getAttribute("aria-invalid")).toBe("true");
    expect((await admin("GET", `/projects/${label}`)).body.containers.map((c: any) => c.label)).toEqual(["web"]);
    expect(await seriousViolations(page)).toEqual([]);
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects", `409 /containers/${label}`]);
  });

  it("shows each SSH grant of a container as the user's e-mail and the permission", async () => {
    const { label, tenant, admin } = await tenantProject(origin, "tg");
    const email = `dev@${label}.example`;
    const sshPublicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGFubmE= dev@laptop";
    expect((await admin("POST", "/admin/users", { email, sshPublicKey })).status).toBe(200);
    const grants = [{ permission: "root", userEmail: email }];
    expect((await admin("PUT", `/admin/containers/${label}/web/permissions`, grants)).status).toBe(200);
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, tenant.username, tenant.password);
    await page.getByRole("link", { name: label }).click();
    const row = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "web", exact: true }) });
    await row.waitFor();
    expect(await row.locator("td").allInnerTexts()).toEqual([
      `${label}.hosts.example.net`,
      expect.stringMatching(/^2001:db8:2::[0-9a-f]+$/),
      `${email} (root)`,
    ]);
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects"]);
  });

  it("shows a stale edit's conflict, what changed meanwhile, and applies after the reload", async () => {
    const { label, tenant, containerId, admin } = await tenantProject(origin, "ts");
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, tenant.username, tenant.password);
    await page.getByRole("link", { name: label }).click();
    await page.getByRole("heading", { name: `Project ${label}` }).waitFor();
    // The heading comes before the project's answer: wait for what the answer shows.
    await page.getByText("No backend yet.").waitFor();
    // Someone else changes the project after the page loaded it.
    expect((await admin("POST", `/backends/${label}`, { label: "other", port: 9090 })).status).toBe(200);

    await page.locator("#label").fill("api");
    await page.locator("#containers").fill(`${containerId}`);
    await clickToWrite(origin, page.getByRole("button", { name: "Check this change (dry run)" }).first());
    const conflict = page.getByRole("alert", { name: "Conflict" });
    await conflict.waitFor();
    expect(await conflict.locator("h3").innerText()).toBe("Someone changed this project meanwhile");
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page.locator("form", { has: page.locator("#params") }), "conflict");
    expect((await admin("GET", `/projects/${label}`)).body.backends.map((b: any) => b.label)).toEqual(["other"]);

    await page.getByRole("button", { name: "Reload the project" }).click();
    const meanwhile = page.getByRole("region", { name: "What changed meanwhile" });
    await meanwhile.locator(".diff-added").first().waitFor();
    await screenshot(meanwhile, "meanwhile");
    expect(await meanwhile.locator(".diff-added").allInnerTexts()).toEqual(
      expect.arrayContaining([expect.stringContaining('"label": "other"'), expect.stringContaining('"port": 9090')]),
    );
    await page.getByRole("rowheader", { name: "other" }).waitFor();
    await clickToWrite(origin, page.getByRole("button", { name: "Check this change (dry run)" }).first());
    await clickToWrite(origin, page.getByRole("button", { name: "Apply" }));
    await page.getByRole("rowheader", { name: "api" }).waitFor();
    expect((await admin("GET", `/projects/${label}`)).body.backends.map((b: any) => b.label).sort()).toEqual([
      "api",
      "other",
    ]);
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects", `412 /backends/${label}`]);
  });

  it("works with the keyboard alone: sign-in, the project link, the dry run and apply", async () => {
    const { label, tenant } = await tenantProject(origin, "tk");
    const watched = await watchedPage(browser);
    const { page } = watched;
    await gotoWithRetry(page, `${origin}/console/`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    const focused = () => page.evaluate(() => (globalThis as any).document.activeElement?.id ?? "");
    // The skip link, the one navigation link (rate limits), then the form.
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("username");
    await page.keyboard.type(tenant.username);
    await page.keyboard.press("Tab");
    await page.keyboard.type(tenant.password);
    await page.keyboard.press("Enter");
    await page.getByRole("link", { name: label }).waitFor();
    await page.getByRole("link", { name: label }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: `Project ${label}` }).waitFor();
    // The new page has the focus: Tab goes on from its content, not from the link left behind.
    await expect.poll(focused).toBe("main");
    await page.locator("#label").focus();
    await page.keyboard.type("kb");
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Apply" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("rowheader", { name: "kb" }).waitFor();
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects"]);
  });

  it("forgets everything at sign-out: nothing in storage, no cookie, the sign-in page again", async () => {
    const { label, tenant } = await tenantProject(origin, "to");
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, tenant.username, tenant.password);
    await page.getByRole("link", { name: label }).waitFor();
    const stored = () =>
      page.evaluate(() => {
        const window = globalThis as any;
        return {
          local: window.localStorage.length,
          session: window.sessionStorage.length,
          cookie: window.document.cookie,
        };
      });
    expect(await stored()).toEqual({ local: 0, session: 0, cookie: "" });
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await visit(page, "projects", "Sign in");
    expect(await stored()).toEqual({ local: 0, session: 0, cookie: "" });
    expect(await page.context().cookies()).toEqual([]);
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects"]);
  });
});
