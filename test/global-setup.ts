// vitest globalSetup of the Workers tests: a small registry of servers the Worker talks to, started once per run
// on free loopback ports and stopped at the end. Each entry returns the bindings it provides (names starting with
// TEST_, e.g. TEST_REDIS_PORT); test/vitest.workers.config.ts hands them all to the Worker. To add a server, add
// an entry to SERVERS (its binding names and the test files that use them) and the names to test/env.d.ts.
// TEST_NO_SERVERS=1 (`npm run test:fast`) starts none, and the config leaves out the files that need them.
import { createServer, type Server } from "node:http";
import type { TestProject } from "vitest/node";
import { freePort } from "./support/processes.mjs";
import { type LocalServer, startMemcached, startRedis } from "./support/local-servers.mjs";

interface Started {
  bindings: Record<string, string>;
  stop(): Promise<void>;
}

interface TestServer {
  name: string;
  /** The names of the bindings start() returns. */
  provides: string[];
  /** The test files that use its bindings, from the root (test/scripts/server-suites.node.test.ts finds the rest). */
  suites: string[];
  start(): Promise<Started>;
}

const stopAll = (servers: LocalServer[]) => async () => {
  await Promise.all(servers.map((server) => server.stop()));
};

/** Answers DNS-over-HTTPS JSON queries for one SRV name with the given targets. */
async function startDoh(
  name: string,
  targets: { host: string; port: number }[],
): Promise<{ port: number; server: Server }> {
  const port = await freePort();
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const asked = url.searchParams.get("name");
    const found = asked === name && url.searchParams.get("type") === "SRV";
    response.setHeader("content-type", "application/dns-json");
    response.end(
      JSON.stringify({
        Status: found ? 0 : 3,
        Answer: found
          ? targets.map((target) => ({ name, type: 33, TTL: 60, data: `10 5 ${target.port} ${target.host}.` }))
          : [],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { port, server };
}

/**
 * Publishers that give no answer, for the ingestion suite: /silent accepts the request and never answers, /trickle
 * answers its headers and the start of a feed that never ends. Also a port nothing listens on (a refused connection).
 */
async function startSilentPublisher(): Promise<Started> {
  const port = await freePort();
  const server = createServer((request, response) => {
    if (request.url !== "/trickle") return;
    response.writeHead(200, { "content-type": "application/rss+xml" });
    response.write('<rss version="2.0"><channel>');
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    bindings: {
      TEST_PUBLISHER_URL: `http://127.0.0.1:${port}`,
      TEST_REFUSED_URL: `http://127.0.0.1:${await freePort()}/feed.xml`,
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const SERVERS: TestServer[] = [
  {
    // The key-value store suites: plain servers (main and per-second), one with a password, one for the pool tests
    // (which pause it, so it is theirs alone), one for the script fallback test (which flushes the script cache: on a
    // shared server other files' scripts would vanish under them, and their loads would hide the fallback).
    name: "redis",
    provides: [
      "TEST_REDIS_PORT",
      "TEST_REDIS_PERSECOND_PORT",
      "TEST_REDIS_AUTH_PORT",
      "TEST_REDIS_POOL_PORT",
      "TEST_REDIS_SCRIPTS_PORT",
    ],
    suites: [
      "test/ratelimit/stores/redis/store.test.ts",
      "test/ratelimit/stores/redis/store.connection.test.ts",
      "test/ratelimit/stores/redis/store.algorithms.test.ts",
      "test/ratelimit/stores/redis/pool.test.ts",
      "test/ratelimit/stores/redis/per-second.test.ts",
      "test/ratelimit/stores/redis/windows.test.ts",
      "test/ratelimit/stores/health-store.test.ts",
    ],
    async start() {
      const servers = await Promise.all([
        startRedis(),
        startRedis(),
        startRedis(["--requirepass", "test-redis-password"]),
        startRedis(),
        startRedis(),
      ]);
      const [main, perSecond, auth, pool, scripts] = servers;
      return {
        bindings: {
          TEST_REDIS_PORT: String(main.port),
          TEST_REDIS_PERSECOND_PORT: String(perSecond.port),
          TEST_REDIS_AUTH_PORT: String(auth.port),
          TEST_REDIS_POOL_PORT: String(pool.port),
          TEST_REDIS_SCRIPTS_PORT: String(scripts.port),
        },
        stop: stopAll(servers),
      };
    },
  },
  {
    // The object cache suite: two memcached nodes, and a DNS-over-HTTPS endpoint whose SRV record names both.
    name: "memcached",
    provides: ["TEST_MEMCACHED_PORT", "TEST_MEMCACHED2_PORT", "TEST_DOH_URL"],
    suites: ["test/ratelimit/stores/memcache/store.test.ts", "test/ratelimit/stores/health-store.test.ts"],
    async start() {
      const servers = await Promise.all([startMemcached(), startMemcached()]);
      const doh = await startDoh(
        "_memcache._tcp.test.internal",
        servers.map((server) => ({ host: "127.0.0.1", port: server.port })),
      );
      return {
        bindings: {
          TEST_MEMCACHED_PORT: String(servers[0].port),
          TEST_MEMCACHED2_PORT: String(servers[1].port),
          TEST_DOH_URL: `http://127.0.0.1:${doh.port}/dns-query`,
        },
        async stop() {
          await new Promise((resolve) => doh.server.close(resolve));
          await stopAll(servers)();
        },
      };
    },
  },
  {
    name: "publishers",
    provides: ["TEST_PUBLISHER_URL", "TEST_REFUSED_URL"],
    suites: ["test/news/ingest/job.unanswered.test.ts"],
    start: startSilentPublisher,
  },
];

/** Whether this run starts no server (`npm run test:fast`). */
export const noServers = process.env.TEST_NO_SERVERS === "1";

/** The test files that need a server SERVERS starts. */
export const serverSuites = [...new Set(SERVERS.flatMap((server) => server.suites))];
/** Every binding name some server provides. */
export const serverBindings = SERVERS.flatMap((server) => server.provides);

export default async function setup(project: TestProject) {
  const started: Started[] = [];
  try {
    for (const server of noServers ? [] : SERVERS) {
      started.push(await server.start());
      const names = Object.keys(started.at(-1)!.bindings).sort();
      if (names.join() !== [...server.provides].sort().join())
        throw new Error(
          `${server.name} started with ${names.join(", ")}, not its provides: ${server.provides.join(", ")}`,
        );
    }
  } catch (error) {
    await Promise.all(started.map((server) => server.stop()));
    throw error;
  }
  project.provide("testServerBindings", Object.assign({}, ...started.map((server) => server.bindings)));
  return async () => {
    await Promise.all(started.map((server) => server.stop()));
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    /** Binding name to value, for every server SERVERS started. */
    testServerBindings: Record<string, string>;
  }
}
