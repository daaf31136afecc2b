// Plain-Node tests of the pure rate-limit core, the Node gRPC gateway's unit tests and every `*.node.test.ts` (pure
// modules of any service): no Workers runtime, so any Workers import fails here.
import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: path.join(import.meta.dirname, ".."),
  test: {
    name: "core",
    environment: "node",
    include: ["test/ratelimit/core/**/*.test.ts", "test/grpc-gateway/**/*.test.ts", "test/**/*.node.test.ts"],
  },
});
