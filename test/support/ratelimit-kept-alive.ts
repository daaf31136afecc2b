// Requests from the rate limit integration suites' bursts to a `wrangler dev`, over a bounded set of kept-alive
// connections that can be refreshed before each burst.
import http from "node:http";
import { lostByProxy, REFRESH_TRIES, REFRESH_TRY_MS } from "./wrangler-dev.mjs";

/**
 * Every request of a suite goes over at most this many kept-alive connections, so wrangler dev's proxy never holds
 * more connections to the Worker than that. workerd closes a connection idle for 5 s, and a POST that the proxy sends
 * on one as it closes is answered 503 "Your worker restarted mid-request" though nothing restarted (workers-sdk issue
 * 14641). Before each burst, as many simultaneous GETs take that hit, and through a run whose requests wait in the
 * Worker for seconds, again every second (keepProxyConnectionsFresh). That makes the race rare, not impossible (16 of
 * 3000 requests of the long tail met it in one CI run), so `send` sends such a request once more. A GET that meets it
 * is not answered at all (the proxy holds it until the next reload), so each refreshing GET has a bound and is tried
 * again. Unbounded, one such GET would hold the long tail's refresh loop, and its test, to the test's time-out (the
 * likely cause of one CI run's time-out there, which printed nothing more); any other request fails at its bound.
 * Hundreds of requests still wait in the Worker at once: the proxy answers nothing before the Worker does.
 */
export const CONNECTIONS = 64;
export const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });

/**
 * How many requests `send` sent again because the proxy lost them, and how many refreshing GETs it held past their
 * bound, for a suite to print. Sending again cannot hide a fault of the Worker: a request that did reach it before the
 * connection failed is counted twice, which the suites' exact counts show, and a restart of workerd itself shows as
 * new process ids (workerdProcesses).
 */
export const proxyLosses = { resent: 0, heldPings: 0 };

/**
 * How long a request may go without an answer: past the longest the Worker itself may hold one in these suites
 * (COUNTER_OBJECT_ADMISSION_MAX_WAIT of 30 s, then the coalescer's 10 s), so that a request nobody answers fails its
 * test with its name at once, not at the test's own time-out with nothing said.
 */
export const ANSWER_WITHIN_MS = 60_000;

/** Nothing came back for a request within its bound; the request was abandoned and its connection closed. */
export class Unanswered extends Error {
  override name = "Unanswered";
}

/** One request over the agent, sent once more if wrangler dev's proxy lost it; its status and body. */
export async function send(
  server: { url: string },
  method: string,
  path: string,
  body?: string,
  withinMs = ANSWER_WITHIN_MS,
): Promise<{ status: number; text: string }> {
  const answer = await sendOnce(server, method, path, body, withinMs);
  if (!lostByProxy(answer.status, answer.text)) return answer;
  proxyLosses.resent++;
  return sendOnce(server, method, path, body, withinMs);
}

function sendOnce(
  server: { url: string },
  method: string,
  path: string,
  body: string | undefined,
  withinMs: number,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${server.url}${path}`, { method, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      response.on("error", reject);
    });
    // Destroying the request also closes its connection, so a connection the proxy stopped answering on is not reused.
    request.setTimeout(withinMs, () =>
      request.destroy(new Unanswered(`${method} ${path}: no answer within ${withinMs} ms`)),
    );
    request.on("error", reject);
    request.end(body);
  });
}

/**
 * One refreshing GET, tried up to `tries` times when unanswered: a GET the proxy holds must not hold the run that
 * refreshes. Once those tries are spent it fails with Unanswered.
 */
async function ping(server: { url: string }, tries: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await send(server, "GET", "/test/ping", undefined, REFRESH_TRY_MS);
      return;
    } catch (error) {
      if (!(error instanceof Unanswered)) throw error;
      proxyLosses.heldPings++;
      if (attempt === tries) throw error;
    }
  }
}

/** Refreshes every connection the proxy may hold to the Worker (see CONNECTIONS), on a machine at rest. */
export const refreshProxyConnections = (server: { url: string }) =>
  Promise.all(Array.from({ length: CONNECTIONS }, () => ping(server, REFRESH_TRIES)));

/**
 * Refreshes the proxy's connections every `everyMs` until the returned stop is called: for a run in which requests
 * wait in the Worker for seconds (the admission wait), so that connections the proxy does not use meanwhile go idle.
 * A GET held past its bound is left to the next round rather than tried again: the rounds go on meanwhile.
 */
export function keepProxyConnectionsFresh(server: { url: string }, everyMs = 1000): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await Promise.all(
        Array.from({ length: CONNECTIONS }, () =>
          ping(server, 1).catch((error: unknown) => {
            if (!(error instanceof Unanswered)) throw error;
          }),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}
