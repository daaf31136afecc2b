// The web console's behaviour when things go other than planned, in a real browser against `wrangler dev` (chromium
// through playwright-core): in-page links and malformed addresses, a network that fails, double clicks, writes that
// race, and the keyboard focus and announcements that follow each step.
import { describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import {
  ADMIN,
  clickToWrite,
  RATELIMIT_TOKEN,
  useConsoleStand,
  expectOnlyOwnOrigin,
  signIn,
  tenantProject,
  visit,
  watchedPage,
} from "../support/console-browser";
import { gotoWithRetry } from "../support/page-load";
import { refreshProxyConnection } from "../support/wrangler-dev.mjs";

let browser: Browser;
let origin: string;
useConsoleStand("console resilience", { HAPROXY_AGENT_URL: "" }, (stand) => ({ browser, origin } = stand));

/** The id, or else the class, or else the tag name of the element that has the keyboard focus. */
const focused = (page: Watched["page"]) =>
  page.evaluate(() => {
    const element = (globalThis as any).document.activeElement;
    return element?.id || element?.className || element?.tagName.toLowerCase();
  });

type Watched = Awaited<ReturnType<typeof watchedPage>>;

/** A tenant with a project of its own (tenantProject's), signed in on a watched page and on that project's page. */
async function openOwnProject(tag: string) {
  const project = await tenantProject(origin, tag);
  const watched = await watchedPage(browser);
  await signIn(watched.page, origin, project.tenant.username, project.tenant.password);
  await watched.page.getByRole("link", { name: project.label }).click();
  await watched.page.getByRole("heading", { name: `Project ${project.label}` }).waitFor();
  return { ...project, watched, page: watched.page };
}

describe("addresses", () => {
  it("keeps the page when the skip link is followed, and moves the focus to it", async () => {
    const { label, watched, page } = await openOwnProject("sk");
    await page.getByRole("link", { name: "Skip to the page" }).focus();
    await page.keyboard.press("Enter");
    expect(await focused(page)).toBe("main");
    expect(new URL(page.url()).hash).toBe(`#/projects/${label}`);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(`Project ${label}`);
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects"]);
  });

  it("shows a page, not a blank console, for an address with a malformed escape", async () => {
    const { tenant } = await tenantProject(origin, "es");
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, tenant.username, tenant.password);
    await visit(page, "projects/%E0%A4%A", "Project %E0%A4%A");
    const refusal = "Invalid project: label %E0%A4%A not existing or access denied";
    await page.getByText(`The server refused: ${refusal} (status 404)`).waitFor();
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects", "404 /projects/%25E0%25A4%25A"]);
  });
});

describe("a network that fails", () => {
  it("says no answer came instead of loading forever", async () => {
    const { tenant } = await tenantProject(origin, "nw");
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, tenant.username, tenant.password);
    await page.route(`${origin}/projects`, (route) => route.abort());
    // A tenant's unknown page is the project list: loaded anew, since the route changed.
    await visit(page, "audit", "Projects");
    await page.getByText("No answer from the server: the network failed or the server is down.").waitFor();
    expect(await page.getByText("Loading…").count()).toBe(0);
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects"]);
  });

  it("says an answer of a shape it did not expect broke the page, keeps the rest, and tries again", async () => {
    const { label, tenant } = await tenantProject(origin, "sh");
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, tenant.username, tenant.password);
    // A list was expected: an object fails the project list's rendering.
    await page.route(`${origin}/projects`, (route) => route.fulfill({ json: { projects: [label] } }));
    await visit(page, "audit", "Projects");
    const problem = "This page could not be shown: an answer from the server was not what the console expects.";
    await page.getByRole("alert").filter({ hasText: problem }).waitFor();
    expect(await page.getByRole("navigation", { name: "Console" }).getByRole("link").allInnerTexts()).toEqual([
      "Projects",
      "Rate limits",
    ]);
    await page.unroute(`${origin}/projects`);
    await page.getByRole("button", { name: "Try again" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("link", { name: label }).waitFor();
    expect(await page.getByText(problem).count()).toBe(0);
    // The console logs what broke for whoever looks into it; nothing else went wrong.
    // The bundle is minified: the list's name is not its name in the source.
    expect(watched.errors.map((error) => error.split("\n")[0])).toEqual([
      expect.stringMatching(/^TypeError: \w+\.map is not a function$/),
    ]);
    watched.errors.length = 0;
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects"]);
  });

  it("keeps a rate limit token only once the service accepted it", async () => {
    const watched = await watchedPage(browser);
    const { page } = watched;
    await gotoWithRetry(page, `${origin}/console/#/ratelimit`);
    await page.route(`${origin}/rlconfig/files`, (route) => route.abort());
    await page.getByLabel("Admin token").fill("wrong-token");
    await page.getByRole("button", { name: "Use this token" }).click();
    await page.getByText("No answer from the server: the network failed or the server is down.").waitFor();
    await page.unroute(`${origin}/rlconfig/files`);
    // Away and back: the page asks for a token again, the unchecked one was not kept.
    await visit(page, "", "Sign in");
    await visit(page, "ratelimit", "Rate limits");
    await page.getByLabel("Admin token").waitFor();
    expect(await page.getByRole("region", { name: "Rules" }).count()).toBe(0);
    await expectOnlyOwnOrigin(watched, origin);
  });

  it("keeps the rate limit token through a sign-in with a wrong password", async () => {
    const watched = await watchedPage(browser);
    const { page } = watched;
    await gotoWithRetry(page, `${origin}/console/#/ratelimit`);
    await page.getByLabel("Admin token").fill(RATELIMIT_TOKEN);
    await page.getByRole("button", { name: "Use this token" }).click();
    await page.getByRole("region", { name: "Rules" }).getByText("remote_address").waitFor();
    await visit(page, "", "Sign in");
    await page.getByLabel("User name").fill(ADMIN.username);
    await page.getByLabel("Password").fill("not-the-password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("The user name or the password is wrong.").waitFor();
    await visit(page, "ratelimit", "Rate limits");
    await page.getByRole("region", { name: "Rules" }).getByText("remote_address").waitFor();
    await expectOnlyOwnOrigin(watched, origin, ["401 /test/authping"]);
  });
});

describe("signing out", () => {
  it("forgets a rate limit token held alone", async () => {
    const watched = await watchedPage(browser);
    const { page } = watched;
    await gotoWithRetry(page, `${origin}/console/#/ratelimit`);
    expect(await page.getByRole("button", { name: "Sign out" }).count()).toBe(0);
    await page.getByLabel("Admin token").fill(RATELIMIT_TOKEN);
    await page.getByRole("button", { name: "Use this token" }).click();
    await page.getByRole("region", { name: "Rules" }).getByText("remote_address").waitFor();
    expect(await page.locator("p.who span").innerText()).toBe("Using the rate limit service's admin token");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await visit(page, "ratelimit", "Rate limits");
    await page.getByLabel("Admin token").waitFor();
    expect(await page.locator("p.who").count()).toBe(0);
    await expectOnlyOwnOrigin(watched, origin);
  });
});

describe("double clicks", () => {
  it("sends Apply once however often it is clicked while the write is out", async () => {
    const { label, containerId, watched, page } = await openOwnProject("dc");
    await page.getByText("No backend yet.").waitFor();
    await page.locator("#label").fill("api");
    await page.locator("#containers").fill(String(containerId));
    await clickToWrite(origin, page.getByRole("button", { name: "Check this change (dry run)" }).first());
    await page.getByRole("region", { name: "Dry run" }).waitFor();
    await refreshProxyConnection({ url: origin });
    await page.getByRole("button", { name: "Apply" }).dblclick();
    await page.locator("section.applied", { hasText: "Applied: backend api is stored" }).waitFor();
    const writes = watched.requests.filter((url) => url === `${origin}/backends/${label}`);
    expect(writes).toEqual([`${origin}/backends/${label}`]);
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects"]);
  });

  it("generates one version however often the button is clicked while it works", async () => {
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, ADMIN.username, ADMIN.password);
    await visit(page, "haproxy", "HAProxy versions");
    await page.getByRole("caption").getByText("Stored versions, newest first").waitFor();
    await page.getByRole("button", { name: "Generate a new version now" }).dblclick();
    await page.getByText(/^WARN: HAPROXY_AGENT_URL is not set: version \d+ is stored/).waitFor();
    expect(watched.requests.filter((url) => url === `${origin}/admin/gensynchaprx`)).toHaveLength(1);
    await expectOnlyOwnOrigin(watched, origin);
  });
});

describe("dry runs of what exists", () => {
  const dryRunText = (page: Watched["page"]) => page.getByRole("region", { name: "Dry run" }).locator("p").first();
  const caption = (page: Watched["page"]) => page.getByRole("region", { name: "Dry run" }).locator("figcaption");

  it("compares a domain with the stored one, and says when the change removes it", async () => {
    const { label, tenant, containerId, admin } = await tenantProject(origin, "dm");
    const domainName = `${label}.example.org`;
    const backend = { label: "web", backendContainers: [{ containerId }], domainForwardings: [{ domainName }] };
    expect((await admin("POST", `/backends/${label}`, backend)).status).toBe(200);
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, tenant.username, tenant.password);
    await page.getByRole("link", { name: label }).click();
    await page.getByRole("rowheader", { name: domainName }).waitFor();
    await page.locator("#domainName").fill(domainName.toUpperCase());
    await page.locator("#redirectToUrl").fill("https://example.net/*");
    const check = page.getByRole("button", { name: "Check this change (dry run)" }).nth(2);
    await clickToWrite(origin, check);
    await caption(page).waitFor();
    const accepted = `The server checked domain ${domainName.toUpperCase()} and would accept it.`;
    expect(await dryRunText(page).innerText()).toBe(`${accepted} Nothing is stored until you apply it.`);
    // The name's case, the comma after the backend, and the redirect.
    expect(await caption(page).innerText()).toBe(`domain ${domainName.toUpperCase()}: 3 lines added, 2 removed`);

    await page.getByLabel("What to do").selectOption("DELETE");
    await clickToWrite(origin, check);
    await caption(page).waitFor();
    expect(await dryRunText(page).innerText()).toBe(`${accepted} Nothing is stored until you apply it. It is removed.`);
    expect(await caption(page).innerText()).toBe(`domain ${domainName.toUpperCase()}: 0 lines added, 4 removed`);
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects"]);
  });

  it("compares a host with the stored one", async () => {
    const { label } = await tenantProject(origin, "hs");
    const hostname = `${label}.hosts.example.net`;
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, ADMIN.username, ADMIN.password);
    await visit(page, "hosts", "Hosts");
    await page.getByRole("rowheader", { name: hostname }).waitFor();
    await page.getByLabel("Host name").fill(hostname);
    await page.getByLabel("IPv6 address").fill(`2001:db8:3::${((Date.now() % 0xfffe) + 1).toString(16)}`);
    await clickToWrite(origin, page.getByRole("button", { name: "Check this change (dry run)" }));
    await caption(page).waitFor();
    const accepted = `The server checked host ${hostname} and would accept it.`;
    expect(await dryRunText(page).innerText()).toBe(`${accepted} Nothing is stored until you apply it.`);
    expect(await caption(page).innerText()).toBe(`host ${hostname}: 1 line added, 1 removed`);
    await expectOnlyOwnOrigin(watched, origin);
  });
});

describe("a conflict", () => {
  it("shows what changed meanwhile, and not the user's own later writes", async () => {
    const { label, containerId, admin, watched, page } = await openOwnProject("mw");
    await page.getByText("No backend yet.").waitFor();
    expect((await admin("POST", `/backends/${label}`, { label: "other", port: 9090 })).status).toBe(200);
    await page.locator("#label").fill("api");
    await page.locator("#containers").fill(`${containerId}`);
    const check = page.getByRole("button", { name: "Check this change (dry run)" }).first();
    await clickToWrite(origin, check);
    await page.getByRole("button", { name: "Reload the project" }).click();
    const meanwhile = page.getByRole("region", { name: "What changed meanwhile" });
    await page.getByRole("rowheader", { name: "other" }).waitFor();
    const shown = await meanwhile.locator("figure").innerText();
    expect(shown).toContain('"label": "other"');

    await clickToWrite(origin, check);
    await clickToWrite(origin, page.getByRole("button", { name: "Apply" }));
    await page.getByRole("rowheader", { name: "api" }).waitFor();
    expect(await meanwhile.locator("figure").innerText()).toBe(shown);
    expect(shown).not.toContain('"label": "api"');
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects", `412 /backends/${label}`]);
  });
});

describe("writes in a row", () => {
  it("sends the ETag its own write answered while the reload is still out", async () => {
    const { label, containerId, admin, watched, page } = await openOwnProject("et");
    await page.getByText("No backend yet.").waitFor();
    const check = page.getByRole("button", { name: "Check this change (dry run)" }).first();
    await page.locator("#label").fill("api");
    await page.locator("#containers").fill(`${containerId}`);
    await clickToWrite(origin, check);
    // The project's reload after the write is held until the second change is applied.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(`${origin}/projects/${label}`, async (route) => (await held, route.continue()));
    await clickToWrite(origin, page.getByRole("button", { name: "Apply" }));
    await page.locator("section.applied", { hasText: "Applied: backend api is stored" }).waitFor();

    await page.locator("#label").fill("second");
    await clickToWrite(origin, check);
    await clickToWrite(origin, page.getByRole("button", { name: "Apply" }));
    await page.locator("section.applied", { hasText: "Applied: backend second is stored" }).waitFor();
    release();
    await page.getByRole("rowheader", { name: "second" }).waitFor();
    const stored = (await admin("GET", `/projects/${label}`)).body.backends.map((backend: any) => backend.label);
    expect(stored.sort()).toEqual(["api", "second"]);
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects"]);
  });
});

describe("the live charts", () => {
  it("says when the statistics could not be read, until a reading succeeds again", async () => {
    const watched = await watchedPage(browser);
    const { page } = watched;
    let failing = true;
    await page.route(`${origin}/stats`, (route) =>
      failing ? route.fulfill({ status: 503, contentType: "text/plain", body: "maintenance" }) : route.continue(),
    );
    await gotoWithRetry(page, `${origin}/console/#/ratelimit`);
    await page.getByLabel("Admin token").fill(RATELIMIT_TOKEN);
    await page.getByRole("button", { name: "Use this token" }).click();
    const charts = page.getByRole("region", { name: "Live charts" });
    const problem = charts.getByRole("alert");
    await problem.waitFor();
    expect(await problem.innerText()).toBe(
      "The statistics could not be read: The server refused: maintenance (status 503)",
    );
    failing = false;
    await problem.waitFor({ state: "detached" });
    await expectOnlyOwnOrigin(watched, origin, ["503 /stats"]);
  });
});

describe("the versions page", () => {
  it("says the version before could not be loaded rather than failing the page", async () => {
    const { admin } = await tenantProject(origin, "vf");
    expect((await admin("GET", "/admin/gensynchaprx")).status).toBe(200);
    expect((await admin("GET", "/admin/gensynchaprx")).status).toBe(200);
    const [latest, previous] = (await admin("GET", "/admin/haproxy/versions")).body;
    const watched = await watchedPage(browser);
    const { page } = watched;
    const refusal = { payload: "the store is unavailable" };
    await page.route(`${origin}/admin/haproxy/versions/${previous.version}`, (route) =>
      route.fulfill({ status: 503, contentType: "application/json", body: JSON.stringify(refusal) }),
    );
    await signIn(page, origin, ADMIN.username, ADMIN.password);
    await visit(page, `haproxy/${latest.version}`, "HAProxy versions");
    const section = page.getByRole("region", { name: `Version ${latest.version}` });
    await section.getByRole("alert").waitFor();
    expect(await section.innerText()).toBe(
      `Version ${latest.version}, compared with version ${previous.version}\n\n` +
        "The server refused: the store is unavailable (status 503)",
    );
    expect(await page.getByRole("link", { name: `Version ${previous.version}` }).count()).toBe(1);
    await expectOnlyOwnOrigin(watched, origin, [`503 /admin/haproxy/versions/${previous.version}`]);
  });
});

describe("focus and announcements", () => {
  it("announces each step of a change in a status line there before it, and keeps the focus in the form", async () => {
    const { label, containerId, watched, page } = await openOwnProject("fa");
    await page.getByText("No backend yet.").waitFor();
    const form = page.locator("form", { has: page.locator("#params") });
    const status = form.getByRole("status");
    expect(await status.count()).toBe(1);
    expect(await status.innerText()).toBe("");
    await page.locator("#label").fill("api");
    await page.locator("#containers").fill(String(containerId));
    await clickToWrite(origin, form.getByRole("button", { name: "Check this change (dry run)" }));
    await form.getByRole("region", { name: "Dry run" }).waitFor();
    expect(await status.innerText()).toBe("Dry run: the server would accept backend api. Apply it to store it.");

    await form.getByRole("button", { name: "Change it again" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => focused(page)).toBe("backend-choice");
    expect(await status.innerText()).toBe("");
    await clickToWrite(origin, form.getByRole("button", { name: "Check this change (dry run)" }));
    await form.getByRole("button", { name: "Apply" }).focus();
    await refreshProxyConnection({ url: origin });
    await page.keyboard.press("Enter");
    await form.locator("section.applied").waitFor();
    expect(await status.innerText()).toBe("Applied: backend api is stored.");
    expect(await focused(page)).toBe("outcome");
    // The next Tab leads on from where the Apply button was, to the next form, not from the page's start.
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("container-label");
    await expectOnlyOwnOrigin(watched, origin, ["403 /admin/projects"]);
  });

  it("puts the focus on the rollback's Yes each time it opens, and back on its button after Cancel", async () => {
    const { admin } = await tenantProject(origin, "rb");
    expect((await admin("GET", "/admin/gensynchaprx")).status).toBe(200);
    expect((await admin("GET", "/admin/gensynchaprx")).status).toBe(200);
    const [, previous] = (await admin("GET", "/admin/haproxy/versions")).body;
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, ADMIN.username, ADMIN.password);
    await visit(page, "haproxy", "HAProxy versions");
    const rollback = page.getByRole("button", { name: `Roll back to version ${previous.version}…` });
    const yes = page.getByRole("button", { name: `Yes, roll back to version ${previous.version}` });
    const focusedText = () => page.evaluate(() => (globalThis as any).document.activeElement.innerText);
    // The confirmation opens, and Yes takes the focus once the page has drawn it (a key pressed before goes nowhere).
    const open = async () => {
      await rollback.focus();
      await page.keyboard.press("Enter");
      await yes.waitFor();
      await expect.poll(focusedText).toBe(`Yes, roll back to version ${previous.version}`);
    };
    for (let round = 0; round < 2; round++) {
      await open();
      await page.keyboard.press("Tab");
      await page.keyboard.press("Enter");
      await expect.poll(focusedText).toBe(`Roll back to version ${previous.version}…`);
    }
    await open();
    await refreshProxyConnection({ url: origin });
    await page.keyboard.press("Enter");
    // The whole outcome, so that a refusal shows its reason.
    const outcome = page.locator(".outcome");
    await expect.poll(() => outcome.innerText()).toMatch(/^Done\.\n/);
    expect(await outcome.getByRole("status").innerText()).toBe("Done.");
    expect(await focused(page)).toBe("outcome applied");
    await expectOnlyOwnOrigin(watched, origin);
  });
});
