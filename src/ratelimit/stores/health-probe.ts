// HEALTHCHECK_STORE: /healthcheck (and the gateway's gRPC health, which mirrors it) reflects whether the configured
// key-value store or object cache can be reached. The probe is bounded and its answer cached, so a health check costs
// at most one round trip per isolate and second, never one per call. Pure logic over a probe function and a clock.

/** How long a probe's answer stands. */
export const PROBE_TTL_MS = 1000;
/** The longest one probe may take before it counts as unreachable. */
export const PROBE_TIMEOUT_MS = 2000;

export class CachedProbe {
  private last: { at: number; healthy: boolean } | undefined;
  private inFlight = false;

  constructor(
    private readonly probe: () => Promise<boolean>,
    private readonly ttlMs = PROBE_TTL_MS,
    private readonly timeoutMs = PROBE_TIMEOUT_MS,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /**
   * The store's health: the last answer while it is fresh; else a probe of its own. A check that finds another
   * request's probe on its way takes the last answer instead of waiting on it (in the Workers runtime a request must
   * not wait on another request's I/O), and only the very first checks wait for a probe of their own.
   */
  async healthy(): Promise<boolean> {
    const last = this.last;
    if (last && this.now() - last.at < this.ttlMs) return last.healthy;
    if (last && this.inFlight) return last.healthy;
    this.inFlight = true;
    try {
      const healthy = await this.bounded();
      this.last = { at: this.now(), healthy };
      return healthy;
    } finally {
      this.inFlight = false;
    }
  }

  /** One probe, false when it fails or takes longer than the bound. */
  private async bounded(): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.timeoutMs)));
    try {
      return await Promise.race([this.probe().catch(() => false), late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
