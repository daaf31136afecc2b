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
    // A bound on a hang, not on speed: tests that start programs took up to 4.3 s in CI on 2 shared cores, near
    // vitest's 5 s default. A test that bounds a duration asserts it itself.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two files at a time: vitest's default is one fewer than the cores, one file at a time on CI's 2 cores, while most
    // of these tests wait on the programs they start.
    maxWorkers: 2,
    // Files and the tests inside them run in a random order (the seed is printed; --sequence.seed=N repeats it), so a
    // test that reads what another wrote fails instead of passing by position.
    sequence: { shuffle: true },
  },
});
