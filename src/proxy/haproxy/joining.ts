// When a tenant's gensynchaprx starts a run, and when it joins one: tenants share the load balancers, so their calls
// are debounced (PROXY_GENERATION_DEBOUNCE) to at most one generation per window, and a call never misses a change
// its caller made before calling. Pure: it decides from the latest run and the clock.

/** The latest gensynchaprx run that started, as the decision needs it. */
export interface StartedRun {
  id: number;
  state: "queued" | "running" | "succeeded" | "failed";
  startedAt: number;
  /**
   * It re-shipped a version made before it started (a rollback, or a retry answering what an earlier attempt shipped):
   * it carries nobody's latest changes.
   */
  reships: boolean;
}

export type JoinDecision =
  /** The run started after the call arrived, so it read every change made before the call: its outcome is the call's. */
  | { kind: "join"; runId: number }
  /** Look again after this many milliseconds: the last run started less than a window ago, ended or not. */
  | { kind: "wait"; ms: number }
  /**
   * Look again soon (POLL_MS, then longer, as while the lock refuses), and no later than `ms`, the end of its window:
   * a run the call may join is still going.
   */
  | { kind: "look"; ms: number }
  /**
   * Start a run now. While one is going (past its window) its lock refuses, and the caller looks again (POLL_MS, then
   * longer); a run whose holder died holds its lock no longer than its lease (JOB_HEARTBEAT_TIMEOUT).
   */
  | { kind: "run" };

/** How soon a call looks again when the lock first refused it; each refusal doubles it, up to MAX_POLL_MS. */
export const POLL_MS = 500;
/** The longest wait between two looks: a run's end is noticed within this. */
export const MAX_POLL_MS = 2_000;
/**
 * Most looks of one call after a `look` or a lock's refusal (each a D1 query, and a lock call after a refusal): past
 * them the lock's refusal is the answer, so a call stays far within a Worker's 1,000 subrequests, however long
 * PROXY_GENERATION_DEBOUNCE and HAPROXY_AGENT_TIMEOUT make its deadline.
 */
export const MAX_POLLS = 200;

export function joinDecision(input: {
  arrivedAt: number;
  now: number;
  debounceMs: number;
  last: StartedRun | undefined;
}): JoinDecision {
  const { arrivedAt, now, debounceMs, last } = input;
  if (!last) return { kind: "run" };
  const ended = last.state === "succeeded" || last.state === "failed";
  const joinable = last.startedAt >= arrivedAt && !last.reships;
  if (ended && joinable) return { kind: "join", runId: last.id };
  const windowEnds = last.startedAt + debounceMs;
  // Past the window, a run still going is left to its lock, which refuses while it holds.
  if (windowEnds <= now) return { kind: "run" };
  // Within it, a run still recorded as going is waited on too: a queued run lets its lock go before its end is
  // written, and trying to run then would start a generation inside the window. One the call may join once it ends
  // is looked at again soon.
  return { kind: !ended && joinable ? "look" : "wait", ms: windowEnds - now };
}

/** What the loop needs from the jobs: the latest started run, starting one, and the outcome of one joined. */
export interface JoinPorts<T> {
  latestStartedRun(): Promise<StartedRun | undefined>;
  /** Starts a run under the lock; rejects with `busy` true when the lock is held. */
  run(): Promise<T>;
  joined(runId: number): Promise<T>;
  isBusy(error: unknown): boolean;
  sleep(ms: number): Promise<void>;
  now(): number;
}

/**
 * A tenant's call: joins the first run that starts after it arrived, waiting out the debounce window and any run in
 * progress, until `deadlineMs` after arrival; past it the lock's refusal (423) is the answer, as without debouncing.
 */
export async function joinOrRun<T>(ports: JoinPorts<T>, input: { debounceMs: number; deadlineMs: number }): Promise<T> {
  const arrivedAt = ports.now();
  let polls = 0;
  for (;;) {
    const last = await ports.latestStartedRun();
    const decision = joinDecision({ arrivedAt, now: ports.now(), debounceMs: input.debounceMs, last });
    if (decision.kind === "join") return ports.joined(decision.runId);
    const left = arrivedAt + input.deadlineMs - ports.now();
    if (decision.kind === "wait" && decision.ms < left) {
      await ports.sleep(decision.ms);
      continue;
    }
    // Looks share the lock's budget of polls, so that a long window costs no more queries than a long deadline.
    if (decision.kind === "look" && left > POLL_MS && polls < MAX_POLLS) {
      await ports.sleep(Math.min(POLL_MS * 2 ** polls, MAX_POLL_MS, decision.ms, left));
      polls++;
      continue;
    }
    try {
      return await ports.run();
    } catch (error) {
      if (!ports.isBusy(error) || left <= POLL_MS || polls === MAX_POLLS) throw error;
      await ports.sleep(Math.min(POLL_MS * 2 ** polls, MAX_POLL_MS, left));
      polls++;
    }
  }
}
