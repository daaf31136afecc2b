// Page loads of the browser suites against `wrangler dev`, bounded and tried once more: its proxy holds a GET sent on
// a connection workerd closed for idleness until its next reload (workers-sdk issue 14641, see wrangler-dev.mjs).
import type { Page, Response } from "playwright-core";

/** How long a first load may go unanswered: the pages load in well under a second. */
export const FIRST_LOAD_MS = 10_000;

/**
 * Loads `url` in `page`. One CI run's page load waited out playwright's 30 s on the proxy's race; a load unanswered
 * within FIRST_LOAD_MS is tried once more, with playwright's own time-out. Any other failure is thrown at once.
 */
export function gotoWithRetry(page: Page, url: string): Promise<Response | null> {
  return page.goto(url, { timeout: FIRST_LOAD_MS }).catch((error: unknown) => {
    if (!(error instanceof Error && error.name === "TimeoutError")) throw error;
    return page.goto(url);
  });
}
