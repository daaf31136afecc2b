// Integration tests in plain Node against a real `wrangler dev` (and, in later suites, real gRPC clients).
import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: path.join(import.meta.dirname, ".."),
  test: {
    name: "integration",
    environment: "node",
    include: ["test/integration/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
