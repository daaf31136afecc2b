// Tests that touch bindings run inside the real Workers runtime (workerd) through vitest-pool-workers,
// with the D1 migrations applied by the setup file and the secrets of .dev.vars.example.
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { noServers, serverSuites } from "./global-setup";
import { LOCAL_VARS } from "../scripts/start/local-vars.mjs";
import { workerAliases } from "./support/worker-aliases";
import { PREBUNDLED } from "./support/prebundled";

const root = path.join(import.meta.dirname, "..");

export default defineConfig(async () => {
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
      name: "workers",
      include: ["test/**/*.test.ts"],
      exclude: [
        "test/grpc-gateway/**",
        "test/integration/**",
        "test/**/*.node.test.ts",
        "node_modules/**",
        ...(noServers ? serverSuites : []),
      ],
      globalSetup: [path.join(root, "test/global-setup.ts")],
      setupFiles: [path.join(root, "test/apply-migrations.ts")],
      maxWorkers: 2,
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
