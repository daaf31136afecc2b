// The agent's records written whole: the temporary file is flushed with all its text before it is renamed over the
// record, and the directory after the rename, so that a power cut never leaves an empty or partial record; a record
// renamed into place counts as written even when its directory's flush fails (logged).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { syncPath } from "../../haproxy-agent/sync-to-disk.mjs";
import { writeWhole } from "../../haproxy-agent/write-whole.mjs";
import { scratchDirs } from "./scratch-dirs";

const tempDir = scratchDirs("agent-write-whole-");
const quiet = () => {};

describe("haproxy-agent: writeWhole", () => {
  it("flushes the whole new text before the rename, and the rename before it resolves", async () => {
    const dir = tempDir();
    const target = path.join(dir, ".agent-state.json");
    writeFileSync(target, '{"version":1}');
    const text = JSON.stringify({ version: 2, padding: "x".repeat(100_000) });
    // What each flush found on disk: the file or directory flushed, the temporary's text, the record's.
    const flushes: { flushed: string; temporary: string | null; record: string }[] = [];
    const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : null);
    await writeWhole(target, text, quiet, async (flushed) => {
      flushes.push({ flushed, temporary: read(`${target}.tmp`), record: read(target)! });
      await syncPath(flushed);
    });
    expect(flushes).toEqual([
      { flushed: `${target}.tmp`, temporary: text, record: '{"version":1}' },
      { flushed: dir, temporary: null, record: text },
    ]);
    expect(readFileSync(target, "utf8")).toBe(text);
  });

  it("leaves the previous record and no temporary file when the flush fails", async () => {
    const dir = tempDir();
    const target = path.join(dir, "record.json");
    writeFileSync(target, "before");
    const eio = Object.assign(new Error("EIO: i/o error, fsync (injected)"), { code: "EIO" });
    await expect(writeWhole(target, "after", quiet, () => Promise.reject(eio))).rejects.toBe(eio);
    expect(readFileSync(target, "utf8")).toBe("before");
    expect(existsSync(`${target}.tmp`)).toBe(false);
  });

  it("resolves, the record written, when only the directory's flush after the rename fails, and logs it once", async () => {
    const dir = tempDir();
    const target = path.join(dir, "record.json");
    writeFileSync(target, "before");
    const eio = Object.assign(new Error("EIO: i/o error, fsync (injected)"), { code: "EIO" });
    const lines: unknown[][] = [];
    const flushed: string[] = [];
    await writeWhole(
      target,
      "after",
      (...line: unknown[]) => lines.push(line),
      async (flushing) => {
        flushed.push(flushing);
        if (flushing === dir) throw eio;
      },
    );
    expect(flushed).toEqual([`${target}.tmp`, dir]);
    expect(readFileSync(target, "utf8")).toBe("after");
    expect(existsSync(`${target}.tmp`)).toBe(false);
    expect(lines).toEqual([
      [
        "warn",
        "haproxy-agent: a record was written, but its directory could not be flushed",
        { file: target, error: "Error: EIO: i/o error, fsync (injected)" },
      ],
    ]);
  });
});
