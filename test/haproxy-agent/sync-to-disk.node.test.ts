// A staged bundle flushed to the disk (sync-to-disk.mjs): every file, a few at a time however many certificates, and
// only then the directories that hold them.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AT_ONCE, syncStaged } from "../../haproxy-agent/sync-to-disk.mjs";

describe("haproxy-agent: syncStaged", () => {
  it(`flushes the files ${AT_ONCE} at a time, then certs/ and the staging directory`, async () => {
    const names = ["haproxy.cfg", ...Array.from({ length: 50 }, (_, index) => `certs/c${index}.pem`)];
    const flushing = { now: 0, most: 0 };
    const flushed: string[] = [];
    await syncStaged("/staging", names, async (target) => {
      flushing.now++;
      flushing.most = Math.max(flushing.most, flushing.now);
      await new Promise((resolve) => setTimeout(resolve, 1));
      flushing.now--;
      flushed.push(target);
    });
    expect(flushing).toEqual({ now: 0, most: AT_ONCE });
    expect(flushed.slice(0, names.length).sort()).toEqual(names.map((name) => path.join("/staging", name)).sort());
    expect(flushed.slice(names.length)).toEqual(["/staging/certs", "/staging"]);
  });
});
