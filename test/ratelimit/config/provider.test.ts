// How an isolate keeps its view of the configuration set fresh: requests never wait on another request's D1 read
// (workerd would run the waiter inside the reader's request), yet a stale view is re-read within an interval.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { CONFIG_CHECK_INTERVAL_MS, currentConfig } from "../../../src/ratelimit/config/provider";
import { clearConfigFiles, replaceConfigFiles } from "../../../src/ratelimit/config/repo";
import { configLoadSettings } from "../../../src/ratelimit/settings";
import { database } from "../../../src/shared/db";
import { configureLogging } from "../../../src/shared/log";

/** A D1 binding whose queries wait while the gate is closed: a read that is "in flight" for as long as we like. */
function gatedD1(inner: D1Database) {
  let release: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  let reads = 0;
  const statement = (prepared: D1PreparedStatement): unknown => ({
    bind: (...values: unknown[]) => statement(prepared.bind(...values)),
    all: async () => (reads++, await gate, prepared.all()),
    raw: async (options?: { columnNames?: boolean }) => (reads++, await gate, prepared.raw(options as never)),
    first: async (column?: string) => (reads++, await gate, prepared.first(column as never)),
    run: async () => (reads++, await gate, prepared.run()),
  });
  const binding = { prepare: (query: string) => statement(inner.prepare(query)) } as unknown as D1Database;
  return {
    db: database(binding),
    close: () => (gate = new Promise((resolve) => (release = resolve))),
    open: () => release(),
    reads: () => reads,
  };
}

const waited = (ms: number) =>
  new Promise<"still waiting">((resolve) => setTimeout(() => resolve("still waiting"), ms));

describe("the isolate's configuration view", () => {
  // Each test starts from the bundled set: another test may have stored a set (one that fails to load, even).
  beforeEach(async () => {
    await clearConfigFiles(database(env.DB));
  });

  it("lets requests use the current view while another request re-reads it, and re-reads once that is overdue", async () => {
    const settings = configLoadSettings({ ...env });
    const d1 = gatedD1(env.DB);
    const first = await currentConfig(d1.db, settings, 0);
    expect(first.config?.domains.length).toBeGreaterThan(0);
    expect(d1.reads()).toBe(1);

    // Within the interval nothing is read.
    expect(await currentConfig(d1.db, settings, CONFIG_CHECK_INTERVAL_MS - 1)).toBe(first);
    expect(d1.reads()).toBe(1);

    // Stale: this request re-reads, its read held open.
    d1.close();
    const rereading = currentConfig(d1.db, settings, CONFIG_CHECK_INTERVAL_MS + 500);
    expect(await Promise.race([rereading, waited(100)])).toBe("still waiting");
    expect(d1.reads()).toBe(2);

    // Another request meanwhile answers at once from the current view instead of awaiting that read.
    expect(await Promise.race([currentConfig(d1.db, settings, CONFIG_CHECK_INTERVAL_MS + 600), waited(1000)])).toBe(
      first,
    );
    expect(d1.reads()).toBe(2);

    // A read in flight for longer than an interval no longer holds the others back: the next request reads itself.
    const overdue = currentConfig(d1.db, settings, 2 * CONFIG_CHECK_INTERVAL_MS + 600);
    expect(await Promise.race([overdue, waited(100)])).toBe("still waiting");
    expect(d1.reads()).toBe(3);

    d1.open();
    expect((await rereading).version).toBe(first.version);
    expect((await overdue).version).toBe(first.version);
  });

  it("compiles a set once when several requests of a cold isolate read it together", async () => {
    // The log level is the isolate's: another test may have left it above info, which would hide the lines counted.
    configureLogging({ ...env, LOG_LEVEL: "info" });
    const settings = configLoadSettings({ ...env });
    const d1 = gatedD1(env.DB);
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    d1.close();
    const first = currentConfig(d1.db, settings, 0);
    const second = currentConfig(d1.db, settings, 1);
    expect(await Promise.race([first, waited(100)])).toBe("still waiting");
    expect(d1.reads()).toBe(2);
    d1.open();
    const [a, b] = await Promise.all([first, second]);
    const loads = log.mock.calls.filter(([line]) => String(line).includes("ratelimit: configuration loaded"));
    log.mockRestore();
    expect(b).toBe(a);
    expect(loads).toHaveLength(1);
  });

  it("keeps the set it has when a newer stored set fails to load, and says why", async () => {
    const settings = configLoadSettings({ ...env });
    const db = database(env.DB);
    const rule = "domain: keep-a\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: minute\n      requests_per_unit: 1\n";
    await replaceConfigFiles(db, [{ name: "keep.yaml", text: rule }]);
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const first = await currentConfig(db, settings, 0);
    expect(first.config?.domains).toEqual(["example", "keep-a"]);
    // Stored without validation, as an isolate with other settings (or an older version) might have.
    await replaceConfigFiles(db, [{ name: "keep.yaml", text: rule.replace("minute", "minit") }]);
    const after = await currentConfig(db, settings, CONFIG_CHECK_INTERVAL_MS);
    log.mockRestore();
    expect(after).toEqual({ ...first, lastError: "keep.yaml: invalid rate limit unit 'minit'" });
    expect(after.config).toBe(first.config);
  });
});
