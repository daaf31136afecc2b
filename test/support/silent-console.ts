// Hooks for suites whose code under test logs on purpose: the console stays quiet in each test, and each test's
// spies, mocks and fake clock are undone after it so that the next one starts from the real ones.
import { afterEach, beforeEach, vi } from "vitest";

/** Registers the hooks in the calling file: call it at the top level of the test file. */
export function silenceConsoleAndRestoreMocks() {
  beforeEach(() => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
  });

  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });
}
