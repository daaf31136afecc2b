// The lending side of counter leases, as one pure step a counter object (core/counter-table.ts) applies to a fixed
// window's counter: an isolate asks for a share of the window's remaining quota, the object adds the share to the
// count (reserved, as if already admitted) and records it against the isolate; unused units come back later and leave
// the count again. Every admission, whether answered by the object or from a share, was counted before it was made,
// so the count never lets more than the limit through, whatever the number of isolates.

// Invariant: admissions + units lent and not yet used ≤ count, and no step admits or lends past the limit. A give-back
// subtracts only what the object's own record says the holder still holds, so a confused or restarted holder can only
// under-admit.

/** What an isolate asks of the object with a fixed-window operation, besides counting that operation's hits. */
export interface LeaseAsk {
  /** The asking isolate (a random id, one per isolate). */
  holder: string;
  /** The limit the count is judged against (the rule's requests_per_unit). */
  limit: number;
  /** Units wanted beyond the operation's own hits; 0 asks for nothing (a give-back alone, or a counted hit). */
  want: number;
  /** Units of the holder's share it will not use, given back. */
  giveBack: number;
  /** Units of the holder's share it answered since its last call, so the object's record of what it holds stays true. */
  used: number;
}

/** The object's answer to an operation that carried a LeaseAsk. */
export interface LeaseReply {
  kind: "lease";
  /** The count after the give-back and the operation's hits, before the new share: the hits' own answer. */
  count: number;
  /** Units lent now (already in the count). */
  granted: number;
}

/** A counter that lends: its count and, per holder, what it still holds as far as the object knows. */
export interface LendingCounter {
  count: number;
  /** Holder → units lent and neither reported used nor given back. Absent until the first lease. */
  holders?: Map<string, number>;
}

/** What the lending did, for the object's statistics. */
export interface LeaseActivity {
  leasesGranted: number;
  leasesReturned: number;
  leaseUnitsLent: number;
}

/**
 * The largest share the object lends now: half of the remainder split between this holder and the others that hold
 * units (so shares shrink as the remainder does and as holders multiply), or nothing below 2 units, where one call per
 * request is what near-limit exactness costs anyway.
 */
export function shareFor(remaining: number, otherHolders: number): number {
  const share = Math.floor(remaining / (2 * (otherHolders + 1)));
  return share < 2 ? 0 : share;
}

function otherHoldersOf(holders: Map<string, number>, holder: string): number {
  let others = 0;
  for (const [name, units] of holders) if (name !== holder && units > 0) others++;
  return others;
}

/**
 * Applies one leased operation to `counter`: settles what the holder reports used, takes back what it gives back
 * (only what it still holds, and only while the window is `open`), counts the hits, then lends at most `ask.want`.
 * A count above the limit (refused hits count, as in the reference) is first brought down to the limit by a give-back:
 * the admissions and outstanding shares it covers never exceed the limit, so nothing admitted is forgotten.
 */
export function leaseStep(
  counter: LendingCounter,
  hits: number,
  ask: LeaseAsk,
  open: boolean,
  activity: LeaseActivity,
): LeaseReply {
  const holders = (counter.holders ??= new Map());
  let held = Math.max(0, (holders.get(ask.holder) ?? 0) - ask.used);
  const back = open ? Math.min(ask.giveBack, held) : 0;
  if (back > 0) {
    counter.count = Math.min(counter.count, ask.limit) - back;
    held -= back;
    activity.leasesReturned++;
  }
  counter.count += hits;
  const count = counter.count;
  let granted = 0;
  if (open && ask.want > 0 && count < ask.limit) {
    granted = Math.min(ask.want, shareFor(ask.limit - count, otherHoldersOf(holders, ask.holder)));
  }
  if (granted > 0) {
    counter.count += granted;
    held += granted;
    activity.leasesGranted++;
    activity.leaseUnitsLent += granted;
  }
  if (held > 0) holders.set(ask.holder, held);
  else holders.delete(ask.holder);
  return { kind: "lease", count, granted };
}

/** Holders still holding units of a counter whose window has closed: their shares expired unused (as far as known). */
export function expiredLeases(counter: LendingCounter): number {
  if (!counter.holders) return 0;
  let expired = 0;
  for (const units of counter.holders.values()) if (units > 0) expired++;
  return expired;
}
