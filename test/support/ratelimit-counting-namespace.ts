// The rate limit counter namespace of a Workers test, wrapped to count what the store asks of its objects, and the
// coalescer settings those counts are taken with.
import { env } from "cloudflare:workers";

/** The counter namespace, counting the calls made to its objects' `increment` and the operations they carry. */
export function countingNamespace() {
  const counted = { calls: 0, operations: 0 };
  const namespace = {
    getByName: (name: string) => {
      const stub = env.RATE_LIMIT_COUNTER.getByName(name);
      return {
        increment: (operations: Parameters<typeof stub.increment>[0]) => {
          counted.calls++;
          counted.operations += operations.length;
          return stub.increment(operations);
        },
      };
    },
  } as unknown as typeof env.RATE_LIMIT_COUNTER;
  return { namespace, counted };
}

/** The coalescer's settings with one call in flight per object and no linger: what the store tests count calls with. */
export const ONE_AT_A_TIME = {
  maxInFlight: 1,
  lingerMs: 0,
  maxOperationsPerCall: 1000,
  maxWaitMs: 10_000,
  handoffMs: 500,
};
