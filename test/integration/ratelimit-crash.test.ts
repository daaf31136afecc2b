// The Durable Object counters' write-behind across a crash: a burst of 600 hits on one key through `wrangler dev`,
// every workerd killed with SIGKILL, then a new `wrangler dev` on the same persisted state. Hits answered within
// COUNTER_WRITE_BEHIND (2 s) before the crash may be lost (an undercount: that many extra admissions later), never
// more, and never an overcount; a crash after the write-behind loses nothing.
import { afterEach, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, dailyLimitConfig, installFiles } from "../support/ratelimit-dev-server";
import { tempDir } from "../support/processes.mjs";
import {
  refreshProxyConnection,
  startWranglerDev,
  workerdProcesses,
  type DevServer,
} from "../support/wrangler-dev.mjs";

const WRITE_BEHIND_MS = 2000;
const LIMIT = 1_000_000;
const HITS = 600;
const BURST_MS = 3000;

const servers: DevServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function start(persistTo: string): Promise<DevServer> {
  const server = await startWranglerDev({ RATELIMIT_ADMIN_TOKEN: ADMIN_TOKEN }, { persistTo });
  servers.push(server);
  await refreshProxyConnection(server);
  return server;
}

/** One hit on the key; the count the Worker answered (the limit less what remains). */
async function hit(server: DevServer, key: string): Promise<number> {
  const response = await fetch(`${server.url}/json`, {
    method: "POST",
    body: JSON.stringify({ domain: "crash", descriptors: [{ entries: [{ key: "client", value: key }] }] }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { statuses: { limitRemaining?: number }[] };
  return LIMIT - (body.statuses[0].limitRemaining ?? 0);
}

/** HITS hits spread over BURST_MS; resolves with the time each answer came. */
async function burst(server: DevServer, key: string): Promise<number[]> {
  const answeredAt: number[] = [];
  const sends = Array.from(
    { length: HITS },
    (_, i) =>
      new Promise<void>((resolve, reject) =>
        setTimeout(
          () => {
            hit(server, key).then(() => {
              answeredAt.push(Date.now());
              resolve();
            }, reject);
          },
          (i * BURST_MS) / HITS,
        ),
      ),
  );
  await Promise.all(sends);
  return answeredAt;
}

/** SIGKILL to every workerd of the server (a crash: nothing flushes), then the rest of its group. */
async function crash(server: DevServer): Promise<number> {
  const killedAt = Date.now();
  for (const pid of workerdProcesses(server)) process.kill(Number(pid), "SIGKILL");
  await server.stop();
  servers.splice(servers.indexOf(server), 1);
  return killedAt;
}

describe("the Durable Object counters across a crash", () => {
  it("loses at most the hits of the last COUNTER_WRITE_BEHIND, and never counts more", async () => {
    const state = tempDir("ratelimit-crash-");
    const first = await start(state.dir);
    await installFiles(first, { "crash.yaml": dailyLimitConfig("crash", "client", LIMIT) });
    const answeredAt = await burst(first, "burst");
    const killedAt = await crash(first);
    const recent = answeredAt.filter((at) => at > killedAt - WRITE_BEHIND_MS).length;

    const second = await start(state.dir);
    const stored = (await hit(second, "burst")) - 1;
    const lost = HITS - stored;
    console.log(
      `write-behind crash: ${lost} of ${HITS} hits lost; ${recent} answered in the last ${WRITE_BEHIND_MS} ms`,
    );
    expect(lost).toBeGreaterThanOrEqual(0);
    expect(lost).toBeLessThanOrEqual(recent);
    state.remove();
  });

  it("loses nothing when the crash comes after the write-behind", async () => {
    const state = tempDir("ratelimit-crash-");
    const first = await start(state.dir);
    await installFiles(first, { "crash.yaml": dailyLimitConfig("crash", "client", LIMIT) });
    await burst(first, "settled");
    await new Promise((resolve) => setTimeout(resolve, WRITE_BEHIND_MS + 1000));
    await crash(first);

    const second = await start(state.dir);
    expect(await hit(second, "settled")).toBe(HITS + 1);
    state.remove();
  });
});
