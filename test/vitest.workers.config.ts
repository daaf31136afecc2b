// Tests that touch bindings run inside the real Workers runtime (workerd) through vitest-pool-workers,
// with the D1 migrations applied by the setup file and the secrets of .dev.vars.example.
import { readdirSync } from "node:fs";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig, type ViteUserConfig } from "vitest/config";
import { noServers, serverSuites } from "./global-setup";
import { LOCAL_VARS } from "../scripts/start/local-vars.mjs";
import { workerAliases } from "./support/worker-aliases";
import { PREBUNDLED } from "./support/prebundled";

const root = path.join(import.meta.dirname, "..");

const exclude = [
  "test/grpc-gateway/**",
  "test/integration/**",
  "test/**/*.node.test.ts",
  "node_modules/**",
  ...(noServers ? serverSuites : []),
];

/**
 * The suites whose files share one runtime per worker, its module graph and storage (isolate: false), rather than
 * start their own: loading the Worker's graph is most of a file's time (about 4 s here). Each of their tests builds
 * what it reads under keys of its own and asserts no count over a whole table, and a file ends with its mocks,
 * stubbed globals and fake timers undone (test/restore-after-file.ts). The proxy and news suites read whole tables
 * (lists, audit logs, job runs) and keep one runtime per file, as do the files in OWN_RUNTIME.
 */
const SHARING_FOLDERS = ["test/ratelimit", "test/shared", "test/durable-objects"];
/** Files in SHARING_FOLDERS that need a runtime of their own: each failed beside the others. */
const OWN_RUNTIME = [
  // Counts every object of the namespace.
  "test/ratelimit/stores/durable-object/store.test.ts",
  // The isolate's cached configuration set and its re-read clock.
  "test/ratelimit/routes/d1-failures.test.ts",
  // The isolate's store clients, kept per setting.
  "test/ratelimit/stores/health-store.test.ts",
  // Statistics and what they flush, which a file before would add to: deltas and exact counts over the whole service.
  "test/durable-objects/rate-limit-stats.test.ts",
  "test/ratelimit/config/xds.test.ts",
  "test/ratelimit/stats/sinks.test.ts",
  "test/ratelimit/stats/telemetry.faults.test.ts",
  "test/ratelimit/stats/telemetry.pages.test.ts",
  "test/ratelimit/stats/telemetry.test.ts",
  "test/ratelimit/stats/telemetry.traces.test.ts",
  "test/ratelimit/stores/durable-object/leases.test.ts",
];
const SHARING = SHARING_FOLDERS.flatMap((folder) =>
  readdirSync(path.join(root, folder), { recursive: true, encoding: "utf8" })
    .map((file) => `${folder}/${file}`)
    .filter((file) => file.endsWith(".test.ts") && !file.endsWith(".node.test.ts") && !OWN_RUNTIME.includes(file)),
).sort();

export default defineConfig(async (): Promise<ViteUserConfig> => {
  const migrations = await readD1Migrations(path.join(root, "migrations"));
  return {
    root,
    resolve: { alias: workerAliases },
    plugins: [
      // The function form reads the ports of the servers test/global-setup.ts started (TEST_* bindings).
      cloudflareTest(({ inject }) => ({
        wrangler: { configPath: path.join(root, "wrangler.toml"), environment: undefined },
        miniflare: {
          bindings: {
            ...inject("testServerBindings"),
            TEST_MIGRATIONS: migrations,
            PROXY_ADMIN_USERNAME: "admin",
            PROXY_ADMIN_PASSWORD: "test-admin-password",
            MASTER_KEY: "test-master-key",
            JWT_SECRET: "test-jwt-secret-0123456789abcdef",
            RATELIMIT_ADMIN_TOKEN: "test-ratelimit-admin-token",
            // workerd runs the objects in this process, as locally: the local values over wrangler.toml's deploy ones.
            ...LOCAL_VARS,
          },
        },
      })),
    ],
    test: {
      exclude,
      globalSetup: [path.join(root, "test/global-setup.ts")],
      setupFiles: [path.join(root, "test/apply-migrations.ts")],
      maxWorkers: 2,
      // A bound on a hang, not on speed: on CI's 2 shared cores tests of 2 to 4 s here took longer than vitest's 5 s
      // default. A test that bounds a duration asserts it itself.
      testTimeout: 30_000,
      hookTimeout: 30_000,
      projects: [
        {
          extends: true,
          test: {
            name: "workers",
            include: ["test/**/*.test.ts"],
            exclude: [...exclude, ...SHARING],
          },
        },
        {
          extends: true,
          test: {
            name: "workers-sharing",
            include: SHARING,
            isolate: false,
            setupFiles: [path.join(root, "test/restore-after-file.ts")],
          },
        },
      ],
      // Each test file loads the Worker's whole module graph afresh; bundling the libraries it imports into a few
      // files once (esbuild, cached in node_modules/.vite) cuts that load by about 40 %. A library left off this list
      // still loads, module by module; an entry point of a listed one must be listed too (prebundled.node.test.ts).
      deps: { optimizer: { ssr: { enabled: true, include: PREBUNDLED } } },
      // Files and the tests inside them run in a random order, as in the core run (the seed is printed;
      // --sequence.seed=N repeats it): a test that reads what another wrote fails instead of passing by position.
      sequence: { shuffle: true },
    },
  };
});
