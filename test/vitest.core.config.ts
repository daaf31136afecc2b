// Plain-Node tests: the Node gRPC gateway's unit tests and every `*.node.test.ts` (pure modules of any service,
// the rate limit core among them): no Workers runtime, so any Workers import fails here.
import path from "node:path";
import { defineConfig } from "vitest/config";
import { workerAliases } from "./support/worker-aliases";

export default defineConfig({
  root: path.join(import.meta.dirname, ".."),
  resolve: { alias: workerAliases },
  test: {
    name: "core",
    environment: "node",
    include: ["test/grpc-gateway/**/*.test.ts", "test/**/*.node.test.ts"],
    // Files and the tests inside them run in a random order (the seed is printed; --sequence.seed=N repeats it), so a
    // test that reads what another wrote fails instead of passing by position.
    sequence: { shuffle: true },
  },
});
