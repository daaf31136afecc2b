// One certificate order of the maintenance job and how its outcome is recorded: the attempts table (at most one
// failed attempt per domain per UTC day, then 2, 4 and at most 7 days), the run's warning, and a CA's rate limit,
// which stops the run's further orders.
import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../shared/db";
import { DomainError } from "../../shared/domain-errors";
import { logError } from "../../shared/log";
import { AcmeError, isCaUnreachable, type IssuedCertificate } from "./acme-client";
import { putAcmeCertificate } from "./certificates";
import { DerError } from "./der";
import type { RenewalWindow } from "./renewal";
import { certificateAttempts } from "./tables";

const DAY_MS = 86_400_000;

type AttemptRow = typeof certificateAttempts.$inferSelect;

/** What an order needs of the renewal it is, if it is one. */
export interface RenewalOrder {
  /** The CA's window the renewal was chosen in; without one, a third of the lifetime remains then. */
  window?: RenewalWindow;
  /** The certificate's ARI ID, sent as `replaces` in the new order when the CA gave a window. */
  replaces?: string;
}

/** What an order needs of the job's dependencies. */
export interface OrderDependencies {
  issuer: { obtain(domainName: string, replaces?: string): Promise<IssuedCertificate> };
  now: () => Date;
}

export const utcDay = (date: Date) => Math.floor(date.getTime() / DAY_MS);

/** The first UTC day a domain may be tried again: the next day after one failure, then 2, 4, at most 7 days later. */
export function nextAttemptDay(attempt: AttemptRow | undefined): number | undefined {
  if (!attempt || attempt.outcome === "succeeded") return undefined;
  // An attempt still pending belonged to a run that died: it counts as a failure.
  const failures = attempt.consecutiveFailures + (attempt.outcome === "pending" ? 1 : 0);
  return utcDay(attempt.lastAttemptAt) + Math.min(2 ** Math.max(failures - 1, 0), 7);
}

export const dayStart = (day: number) => new Date(day * DAY_MS).toISOString();

/** A CA's refusal of the account's orders for a while (RFC 8555 §6.6), not of the name asked for. */
const isRateLimit = (error: unknown) =>
  error instanceof AcmeError && (error.type === "urn:ietf:params:acme:error:rateLimited" || error.status === 429);

/**
 * One order, recorded as pending first so that a run dying mid-order still counts as a failure; answers how it went
 * (a CA's rate limit is a failure of this name too, and tells the run to stop ordering).
 */
export async function attemptOne(
  db: Database,
  deps: OrderDependencies,
  target: { domainName: string; renewal?: RenewalOrder; attempt: AttemptRow | undefined },
  warnings: string[],
): Promise<"obtained" | "failed" | "rate-limited" | "ca-unreachable"> {
  const { domainName, renewal, attempt } = target;
  const attemptAt = deps.now();
  const failuresBefore =
    attempt?.outcome === "failed" || attempt?.outcome === "pending"
      ? attempt.consecutiveFailures + (attempt.outcome === "pending" ? 1 : 0)
      : 0;
  await db
    .insert(certificateAttempts)
    .values({
      domainName,
      lastAttemptAt: attemptAt,
      outcome: "pending",
      consecutiveFailures: failuresBefore,
      lastError: null,
    })
    .onConflictDoUpdate({
      target: certificateAttempts.domainName,
      set: { lastAttemptAt: attemptAt, outcome: "pending", consecutiveFailures: failuresBefore, lastError: null },
    });
  try {
    const issued = await deps.issuer.obtain(domainName, renewal?.replaces);
    const row = await putAcmeCertificate(db, { domainName, ...issued, now: deps.now() });
    await db
      .update(certificateAttempts)
      .set({ outcome: "succeeded", consecutiveFailures: 0 })
      .where(eq(certificateAttempts.domainName, domainName));
    warnings.push(
      `INFO: Certificate ${row.name} obtained from ${row.issuer}, valid until ${row.notAfter.toISOString()}${renewalNote(renewal)}`,
    );
    return "obtained";
  } catch (error) {
    const cause = attemptFailure(domainName, error);
    await db
      .update(certificateAttempts)
      .set({
        outcome: "failed",
        consecutiveFailures: sql`${certificateAttempts.consecutiveFailures} + 1`,
        lastError: cause,
      })
      .where(and(eq(certificateAttempts.domainName, domainName), eq(certificateAttempts.outcome, "pending")));
    const next = nextAttemptDay({
      domainName,
      lastAttemptAt: attemptAt,
      outcome: "failed",
      consecutiveFailures: failuresBefore + 1,
      lastError: cause,
    });
    warnings.push(`WARN: no certificate for ${domainName}: ${cause}; next attempt on ${dayStart(next!)}`);
    return isRateLimit(error) ? "rate-limited" : isCaUnreachable(error) ? "ca-unreachable" : "failed";
  }
}

/**
 * Why an attempt failed, as its warning (which a tenant who started the run reads) and the attempts table say it: the
 * CA's answer, a certificate's or a network error's own words; anything else (a D1 error quotes its SQL and
 * parameters, a new private key among them) is logged, and recorded as an internal error.
 */
function attemptFailure(domainName: string, error: unknown): string {
  if (error instanceof AcmeError || error instanceof DerError || error instanceof DomainError)
    return error.message.slice(0, 1000);
  logError(`certificates: the attempt for ${domainName} failed`, error);
  return "internal error (see the logs)";
}

function renewalNote(renewal: RenewalOrder | undefined): string {
  if (!renewal) return "";
  if (!renewal.window) return "; renewed with a third of its lifetime left";
  const { start, end, explanationUrl } = renewal.window;
  return `; renewed in the CA's renewal window ${start.toISOString()} to ${end.toISOString()}${explanationUrl ? ` (${explanationUrl})` : ""}`;
}
