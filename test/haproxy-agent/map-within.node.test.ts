// The agent's small worker pool (map-within.mjs): results in the items' order however the calls end, never more calls
// under way than its limit, and a failure that stops new calls and is thrown once those under way have ended.
import { describe, expect, it } from "vitest";
import { mapWithin } from "../../haproxy-agent/map-within.mjs";

/** Resolves after `ms` milliseconds. */
const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A call that counts the calls under way (and the most seen at once), taking `ms(item)` to end. */
function counted<T>(ms: (item: T) => number) {
  const seen = { under: 0, most: 0, started: [] as T[], ended: [] as T[] };
  const call = async (item: T) => {
    seen.started.push(item);
    seen.under++;
    seen.most = Math.max(seen.most, seen.under);
    await after(ms(item));
    seen.under--;
    seen.ended.push(item);
    return item;
  };
  return { seen, call };
}

describe("haproxy-agent: mapWithin", () => {
  it("answers in the items' order, whichever call ends first", async () => {
    const items = [30, 5, 20, 1, 10, 0, 15];
    const { seen, call } = counted((item: number) => item);
    expect(await mapWithin(items, 3, async (item, index) => `${index}:${await call(item)}`)).toEqual([
      "0:30",
      "1:5",
      "2:20",
      "3:1",
      "4:10",
      "5:0",
      "6:15",
    ]);
    expect(seen.started).toEqual(items);
    expect(seen.ended).not.toEqual(items);
  });

  it("never has more calls under way than its limit, and reaches it", async () => {
    const items = Array.from({ length: 40 }, (_, index) => index);
    const { seen, call } = counted((item: number) => item % 3);
    expect(await mapWithin(items, 4, call)).toEqual(items);
    expect(seen.most).toBe(4);
    expect(seen.under).toBe(0);

    const few = counted(() => 1);
    expect(await mapWithin([1, 2], 4, few.call)).toEqual([1, 2]);
    expect(few.seen.most).toBe(2);
    expect(await mapWithin([], 4, few.call)).toEqual([]);
  });

  it("starts no call after a failure, and rejects with the first error once the calls under way have ended", async () => {
    const items = Array.from({ length: 20 }, (_, index) => index);
    const { seen, call } = counted(() => 5);
    const first = new Error("EIO on item 2");
    const failing = mapWithin(items, 4, async (item) => {
      if (item === 2) throw first;
      if (item === 3) {
        await after(1);
        throw new Error("EIO on item 3");
      }
      return call(item);
    });
    await expect(failing).rejects.toBe(first);
    // Items 0 and 1 started with the failing ones and ended before the rejection; nothing started past the failure.
    expect(seen.started).toEqual([0, 1]);
    expect(seen.ended.sort()).toEqual([0, 1]);
    expect(seen.under).toBe(0);
  });

  it("refuses a limit that is no positive integer", async () => {
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      await expect(mapWithin([1], limit, async (item) => item)).rejects.toThrow(
        `the limit must be a positive integer: ${limit}`,
      );
    }
  });
});
