// A small worker pool for work over many files: each call holds a file descriptor (and one of libuv's four threads)
// while it runs, so 5,000 certificates read or flushed all at once would exhaust a 1024 open-file limit (EMFILE).
/**
 * Maps `items` through `fn` with at most `limit` calls under way at once, each starting as one ends. Resolves with the
 * results in the items' order; on a failure, starts no more calls and rejects with the first error once the calls
 * under way have ended (so nothing is still reading or flushing a directory the caller then removes).
 * @template T, R
 * @param {readonly T[]} items @param {number} limit a positive integer
 * @param {(item: T, index: number) => Promise<R>} fn
 * @returns {Promise<R[]>}
 */
export async function mapWithin(items, limit, fn) {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`the limit must be a positive integer: ${limit}`);
  /** @type {R[]} */
  const results = new Array(items.length);
  /** @type {{ error: unknown } | undefined} */
  let failure;
  let next = 0;
  const worker = async () => {
    while (!failure && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index], index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
  return results;
}
