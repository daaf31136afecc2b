// The digest of the files on disk that GET /v1/status recomputes at each call: it stays right when a certificate
// changes (same size included), appears or goes away, and reads again only the files that changed; a file changed
// within the last two seconds is read every time (a change within the same tick of its clock would keep its times);
// a few files at a time, so that thousands of certificates never exhaust the open-file limit.
import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bundleDigest } from "../../haproxy-agent/bundle.mjs";
import { createLiveDigest, READS_AT_ONCE } from "../../haproxy-agent/live-digest.mjs";
import { scratchDirs } from "./scratch-dirs";

const tempDir = scratchDirs("agent-live-digest-");

/** A configuration directory holding `files`, and a digest whose reads are listed (by bundle path) in `reads`. */
function watched(files: Record<string, string>, now?: () => number) {
  const dir = tempDir();
  mkdirSync(path.join(dir, "certs"));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  const reads: string[] = [];
  const digest = createLiveDigest({
    read: (file: string, encoding: "utf8") => {
      reads.push(path.relative(dir, file));
      return readFile(file, encoding);
    },
    now,
  });
  return { dir, reads, digest: () => digest(dir) };
}

const files = { "haproxy.cfg": "global\n", "certs/a.pem": "certificate a\n", "certs/b.pem": "certificate b\n" };
/** A clock ten seconds ahead: every file is old enough to be kept. */
const later = () => Date.now() + 10_000;

describe("haproxy-agent: the digest of the files on disk", () => {
  it("reads an unchanged file once, and again only a certificate that changed, appeared or went away", async () => {
    const disk = watched(files, later);
    expect(await disk.digest()).toBe(bundleDigest(files));
    expect(disk.reads.splice(0).sort()).toEqual(["certs/a.pem", "certs/b.pem", "haproxy.cfg"]);
    expect(await disk.digest()).toBe(bundleDigest(files));
    expect(disk.reads).toEqual([]);

    // The same size, another text: its times tell it (set apart, as a later write would).
    const changed = path.join(disk.dir, "certs", "b.pem");
    writeFileSync(changed, "certificate B\n");
    utimesSync(changed, new Date("2030-01-01T00:00:00Z"), new Date("2030-01-01T00:00:00Z"));
    const edited = { ...files, "certs/b.pem": "certificate B\n" };
    expect(await disk.digest()).toBe(bundleDigest(edited));
    expect(disk.reads.splice(0)).toEqual(["certs/b.pem"]);

    writeFileSync(path.join(disk.dir, "certs", "c.pem"), "certificate c\n");
    rmSync(path.join(disk.dir, "certs", "a.pem"));
    const now = { "haproxy.cfg": "global\n", "certs/b.pem": "certificate B\n", "certs/c.pem": "certificate c\n" };
    expect(await disk.digest()).toBe(bundleDigest(now));
    expect(disk.reads.splice(0)).toEqual(["certs/c.pem"]);
  });

  it("reads a file changed within the last two seconds every time", async () => {
    const disk = watched(files);
    expect(await disk.digest()).toBe(bundleDigest(files));
    expect(await disk.digest()).toBe(bundleDigest(files));
    const once = ["certs/a.pem", "certs/b.pem", "haproxy.cfg"];
    expect(disk.reads.sort()).toEqual(once.flatMap((name) => [name, name]));
  });

  it("is null without a haproxy.cfg, and sees one that appears", async () => {
    const disk = watched({ "certs/a.pem": "certificate a\n" }, later);
    expect(await disk.digest()).toBeNull();
    writeFileSync(path.join(disk.dir, "haproxy.cfg"), "global\n");
    expect(await disk.digest()).toBe(bundleDigest({ "haproxy.cfg": "global\n", "certs/a.pem": "certificate a\n" }));
  });

  it(`reads at most ${READS_AT_ONCE} files at once, however many certificates (a 1024 open-file limit holds)`, async () => {
    const many: Record<string, string> = { "haproxy.cfg": "global\n" };
    for (let index = 0; index < 300; index++) many[`certs/c${index}.pem`] = `certificate ${index}\n`;
    const dir = tempDir();
    mkdirSync(path.join(dir, "certs"));
    for (const [name, text] of Object.entries(many)) writeFileSync(path.join(dir, name), text);
    const reading = { now: 0, most: 0, count: 0 };
    const digest = createLiveDigest({
      read: async (file: string, encoding: "utf8") => {
        reading.now++;
        reading.count++;
        reading.most = Math.max(reading.most, reading.now);
        try {
          // Held a little, as a cold disk would: every read the digest starts meanwhile is under way together.
          await new Promise((resolve) => setTimeout(resolve, 1));
          return await readFile(file, encoding);
        } finally {
          reading.now--;
        }
      },
    });
    expect(await digest(dir)).toBe(bundleDigest(many));
    expect(reading).toEqual({ now: 0, most: READS_AT_ONCE, count: 301 });
  });
});
