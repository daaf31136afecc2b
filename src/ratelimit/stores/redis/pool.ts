// One member of the connection pool: a transport used by one batch of callers at a time, so that under load the
// connection carries many callers' commands per round trip.
import { RedisError } from "./connection";
import type { Command, Reply } from "./resp";
import type { Transport } from "./topology";

// Callers that arrive while a batch is in flight find the member "empty" and wait, first in first out; when the batch
// is answered, everything waiting goes out together as the next batch, in one write. KVSTORE_PIPELINE_WINDOW > 0 also
// holds a batch back that long to gather more callers. KVSTORE_POOL_ON_EMPTY_BEHAVIOR decides what a caller does once
// it has waited KVSTORE_POOL_ON_EMPTY_WAIT_DURATION: CREATE sends its commands over a new, extra connection; ERROR
// fails; WAIT keeps waiting (up to the time-out).

export type OnEmpty = "CREATE" | "ERROR" | "WAIT";

export interface PoolBehaviour {
  windowMs: number;
  onEmpty: OnEmpty;
  waitMs: number;
  timeoutMs: number;
}

interface Job {
  commands: readonly Command[];
  resolve: (replies: Reply[]) => void;
  reject: (error: Error) => void;
  timers: ReturnType<typeof setTimeout>[];
}

export class PooledConnection {
  private transport: Transport | undefined;
  private busy = false;
  private windowTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly waiting: Job[] = [];

  constructor(
    private readonly openTransport: (overflow: boolean) => Transport,
    private readonly behaviour: PoolBehaviour,
  ) {}

  run(commands: readonly Command[]): Promise<Reply[]> {
    return new Promise<Reply[]>((resolve, reject) => {
      const job: Job = { commands, resolve, reject, timers: [] };
      this.waiting.push(job);
      if (this.busy) this.armEmptyTimers(job);
      this.schedule();
    });
  }

  /**
   * True when the member holds an open connection. With `check` (the health check), the connection must also answer:
   * the member dials when it holds none and sends a PING in turn with its callers, since a store that hangs keeps its
   * sockets open (the caller bounds the wait with the store's time-out).
   */
  async active(check: boolean): Promise<boolean> {
    const transport = (this.transport ??= this.openTransport(false));
    if (!check) return transport.isActive();
    try {
      await transport.ensureConnected();
      const [reply] = await this.run([["PING"]]);
      return reply === "PONG" && transport.isActive();
    } catch {
      return false;
    }
  }

  close(): void {
    this.transport?.close();
    this.transport = undefined;
    for (const job of this.waiting.splice(0))
      this.settle(job, () => job.reject(new RedisError("kvstore: connection pool closed")));
  }

  private armEmptyTimers(job: Job): void {
    const { onEmpty, waitMs, timeoutMs } = this.behaviour;
    if (onEmpty === "ERROR") {
      job.timers.push(
        setTimeout(
          () =>
            this.takeWaiting(job, () =>
              job.reject(new RedisError(`kvstore: connection pool empty after waiting ${waitMs} ms`)),
            ),
          waitMs,
        ),
      );
    } else if (onEmpty === "CREATE") {
      job.timers.push(setTimeout(() => this.takeWaiting(job, () => this.runOnExtraConnection(job)), waitMs));
    }
    job.timers.push(
      setTimeout(
        () =>
          this.takeWaiting(job, () =>
            job.reject(new RedisError(`kvstore: no pooled connection free within ${timeoutMs} ms`)),
          ),
        timeoutMs,
      ),
    );
  }

  /** Removes a job that is still waiting and hands it to `then`; a job already sent is left alone. */
  private takeWaiting(job: Job, then: () => void): void {
    const at = this.waiting.indexOf(job);
    if (at < 0) return;
    this.waiting.splice(at, 1);
    this.settle(job, then);
  }

  private settle(job: Job, then: () => void): void {
    for (const timer of job.timers) clearTimeout(timer);
    then();
  }

  private runOnExtraConnection(job: Job): void {
    const extra = this.openTransport(true);
    extra
      .exec(job.commands)
      .then(job.resolve, job.reject)
      .finally(() => extra.close());
  }

  private schedule(): void {
    if (this.busy || this.waiting.length === 0 || this.windowTimer !== undefined) return;
    if (this.behaviour.windowMs > 0) {
      this.windowTimer = setTimeout(() => {
        this.windowTimer = undefined;
        this.flush();
      }, this.behaviour.windowMs);
    } else {
      this.flush();
    }
  }

  private flush(): void {
    if (this.busy || this.waiting.length === 0) return;
    const batch = this.waiting.splice(0);
    for (const job of batch) for (const timer of job.timers) clearTimeout(timer);
    this.busy = true;
    const transport = (this.transport ??= this.openTransport(false));
    transport
      .exec(batch.flatMap((job) => job.commands))
      .then(
        (replies) => {
          let position = 0;
          for (const job of batch) {
            job.resolve(replies.slice(position, position + job.commands.length));
            position += job.commands.length;
          }
        },
        (error: Error) => {
          for (const job of batch) job.reject(error);
        },
      )
      .finally(() => {
        this.busy = false;
        // Callers that arrived meanwhile were waiting on an "empty" pool: they go next, together.
        this.schedule();
      });
  }
}
