// Setup of the Workers suites that share a runtime between files (test/vitest.workers.config.ts): what a file mocked,
// stubbed or faked is undone when it ends, so that the next file in the same runtime starts from the real thing.
import { afterAll, vi } from "vitest";

afterAll(() => {
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
  vi.useRealTimers();
});
