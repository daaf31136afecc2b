// Integration tests in plain Node against a real `wrangler dev` (and real gRPC clients, HAProxy, Redis, Chromium).
// Two groups, one after the other: first the suites listed in SHARED, two files at a time; then every other suite,
// one file at a time, alone on the machine.
import path from "node:path";
import { defineConfig } from "vitest/config";

/**
 * The suites that may share the machine with another: none asserts how long something takes, and none loads the
 * machine for long (a burst, a soak). A suite not listed runs alone: the suites that measure time or load (a hang
 * answered within a bound, a crash's recovery, a failover, bursts of thousands) would read another suite's load as
 * their own. `npm start`'s suite shares: its only bounds (90 s to get ready, 15 s for a group to be gone) are many
 * times what a start and a stop take here, and it is the longest suite (over two minutes).
 */
const SHARED = [
  "body-limits",
  "console-browser",
  "console-jobs",
  "console-resilience",
  "docs-browser",
  "haproxy-keywords",
  "haproxy-params",
  "npm-start",
  "openapi-examples",
  "proxy-agent",
  "proxy-blast-radius",
  "proxy-haproxy",
  "proxy-sni",
  "proxy-tenant-attacks",
  "proxy-walkthrough",
  "ratelimit-grpc",
  "ratelimit-redis-cluster",
  "ratelimit-redis-tls",
].map((name) => `test/integration/${name}.test.ts`);

export default defineConfig({
  root: path.join(import.meta.dirname, ".."),
  test: {
    environment: "node",
    testTimeout: 120_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: { name: "integration", include: SHARED, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: "integration-alone",
          include: ["test/integration/**/*.test.ts"],
          exclude: SHARED,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
