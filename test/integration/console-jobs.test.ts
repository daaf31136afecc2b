// The web console's job page while a job runs, in a real browser against `wrangler dev`: a gensynchaprx held at the
// load balancer's agent shows as running, and the page shows its end by itself, without a reload. The agent is a
// stand-in at the true outside edge (an HTTP server that answers only when the test lets it).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import {
  ADMIN,
  type ConsoleStand,
  startConsoleStand,
  expectOnlyOwnOrigin,
  proxyCall,
  seriousViolations,
  signIn,
  visit,
  watchedPage,
} from "../support/console-browser";

let stand: ConsoleStand;
let browser: Browser;
let origin: string;
let agent: http.Server;
/** Requests the agent holds; `release` answers them (and every later one) 503. */
const held: http.ServerResponse[] = [];
let released = false;
const refuse = (response: http.ServerResponse) =>
  response.writeHead(503, { "Content-Type": "text/plain" }).end("agent busy (test)");

beforeAll(async () => {
  agent = http.createServer((request, response) => {
    request.resume();
    if (released) refuse(response);
    else held.push(response);
  });
  await new Promise<void>((resolve) => agent.listen(0, "127.0.0.1", resolve));
  stand = await startConsoleStand("console jobs", {
    HAPROXY_AGENT_URL: `http://127.0.0.1:${(agent.address() as AddressInfo).port}`,
    HAPROXY_AGENT_TOKEN: "console-jobs-agent-token",
  });
  ({ browser, origin } = stand);
});

afterAll(async () => {
  released = true;
  held.splice(0).forEach(refuse);
  await stand?.stop();
  await new Promise((resolve) => agent?.close(resolve));
});

const admin = (method: string, route: string) => proxyCall(origin, ADMIN, method, route);

/** The newest gensynchaprx run once it is running (the call that started it waits on the agent). */
async function runningRun(): Promise<{ id: number; state: string }> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const [run] = (await admin("GET", "/admin/jobs?kind=gensynchaprx&limit=1")).body;
    if (run?.state === "running") return run;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("no gensynchaprx run became running");
}

describe("the job page while a job runs", () => {
  it("shows the run as running, then its end without a reload", async () => {
    const generation = admin("GET", "/admin/gensynchaprx");
    const run = await runningRun();
    const watched = await watchedPage(browser);
    const { page } = watched;
    await signIn(page, origin, ADMIN.username, ADMIN.password);
    await visit(page, "jobs", "Job runs");
    await page.getByRole("link", { name: `Run ${run.id}`, exact: true }).click();
    const shown = page.getByRole("region", { name: `Run ${run.id}` });
    await shown.getByText("running (this page refreshes every two seconds)").waitFor();
    const loads = watched.requests.filter((url) => url.endsWith(`/admin/jobs/${run.id}`)).length;
    expect(await seriousViolations(page)).toEqual([]);

    released = true;
    held.splice(0).forEach(refuse);
    const ended = await generation;
    const finished = (await admin("GET", `/admin/jobs/${run.id}`)).body;
    expect(finished.state).not.toBe("running");
    // The page asks again by itself and shows the run's end: its state and its error, as the API gives them.
    await shown.locator("dd").nth(1).getByText(finished.state, { exact: true }).waitFor({ timeout: 15_000 });
    expect(await shown.locator("dd").nth(1).innerText()).toBe(finished.state);
    expect(await shown.getByText(finished.error, { exact: true }).count()).toBe(1);
    expect(watched.requests.filter((url) => url.endsWith(`/admin/jobs/${run.id}`)).length).toBeGreaterThan(loads);
    expect(ended.status).toBe(500);
    await expectOnlyOwnOrigin(watched, origin);
  });
});
