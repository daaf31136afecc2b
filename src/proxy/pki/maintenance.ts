// The certificate maintenance job (/maintenance/start and the daily cron): drop expired certificates and those no
// domain asks for any more, obtain missing public CA certificates over ACME (HTTP-01, answered by this Worker), renew
// those whose time came (the CA's renewal window when it offers ACME Renewal Information, else when a third of the
// lifetime remains), name the certificates that end soon, and queue a gensynchaprx when anything changed. A domain
// whose last attempt failed waits: at most one failed attempt per domain per (UTC) day, then 2, 4 and at most 7 days.
import { eq, lt } from "drizzle-orm";
import { inJsonList, type Database } from "../../shared/db";
import { isCaUnreachable, type IssuedCertificate, type RenewalInfoAnswer } from "./acme-client";
import { attemptOne, dayStart, nextAttemptDay, utcDay, type RenewalOrder } from "./attempts";
import { listCertificates } from "./certificates";
import {
  acmeWarningPoint,
  ariCertificateId,
  nextPollAt,
  oneThirdLeft,
  readRenewalInfo,
  renewalPoint,
  sameWindow,
  type RenewalWindow,
} from "./renewal";
import type { CertificateRow } from "./rows";
import { acmeCertificateName, selectCertificates } from "./selection";
import {
  SUBREQUESTS_PER_ACME_ORDER,
  SUBREQUESTS_RESERVED_PER_CERTIFICATE_RUN,
  WORKER_SUBREQUESTS,
  type ProxySettings,
} from "../settings";
import { backends, domains } from "../installation/tables";
import { acmeChallenges, certificateAttempts, certificateRenewalWindows, certificates } from "./tables";
import { readCertificatePem } from "./x509";

const DAY_MS = 86_400_000;

export { nextAttemptDay };

/** Obtains certificates; prepare() runs once before the first order (directory, account). */
export interface CertificateIssuer {
  prepare(): Promise<void>;
  /** `replaces`: the ARI certificate ID of the certificate this one renews (RFC 9773 §5). */
  obtain(domainName: string, replaces?: string): Promise<IssuedCertificate>;
  /** The CA's RenewalInfo for an ARI certificate ID, or undefined when it offers none; throws when it fails. */
  renewalInfo(certificateId: string): Promise<RenewalInfoAnswer | undefined>;
}

type AttemptRow = typeof certificateAttempts.$inferSelect;
type WindowRow = typeof certificateRenewalWindows.$inferSelect;

function endingWarning(row: CertificateRow): string {
  const level = row.source === "acme" ? "INFO" : "WARN";
  return `${level}: Certificate ${row.name} ends on ${row.notAfter.toISOString()}. It covers the domain names ${row.domainNames.join(", ")}`;
}

export interface MaintenanceDependencies {
  settings: Pick<ProxySettings, "CERT_WARN_DAYS" | "ACME_RENEWAL_INFO_PER_RUN" | "ACME_ORDERS_PER_RUN">;
  issuer: CertificateIssuer;
  now: () => Date;
  /** Uniform in [0, 1): draws the renewal point in a CA's window. */
  random: () => number;
  /** Called before each order, so that a long run keeps its lock. */
  keepLock: () => Promise<void>;
  /** Queues a gensynchaprx; returns its job run id. */
  queueGenSync: () => Promise<number>;
  /** Asks for another certificate run once this one has ended, for the domains past this run's orders. */
  queueFollowUp: () => void;
  /**
   * Whether ACME certificates changed since the version in force and no gensynchaprx is on its way to ship them (an
   * earlier run died before queueing its own, or that one failed for good): this run queues one then.
   */
  acmeChangesUndeployed: () => Promise<boolean>;
}

/** The job's work on the database; returns its warnings. */
export async function maintainCertificates(db: Database, deps: MaintenanceDependencies): Promise<string[]> {
  const start = deps.now();
  const warnings: string[] = [];
  const state = await readState(db, start);
  const removed = await removeUnwanted(db, state, start, warnings);
  const due = await dueDomains(db, deps, { state, removed, start, warnings });
  const obtained = await obtainDue(db, deps, { due, state, start, warnings });
  await warnEnding(db, deps, state.domainRows, start, warnings);
  if (removed.length > 0 || obtained)
    warnings.push(`INFO: certificates changed: HAProxy configuration job ${await deps.queueGenSync()} queued`);
  else if (await deps.acmeChangesUndeployed())
    warnings.push(
      `INFO: the version in force predates ACME certificate changes: HAProxy configuration job ${await deps.queueGenSync()} queued`,
    );
  return warnings;
}

type State = Awaited<ReturnType<typeof readState>>;

/** Drops challenges older than a day, then reads what the run decides on, in one round trip. */
async function readState(db: Database, start: Date) {
  await db.delete(acmeChallenges).where(lt(acmeChallenges.createdAt, new Date(start.getTime() - DAY_MS)));
  const [certificateRows, domainRows, attemptRows, windowRows] = await db.batch([
    db.select().from(certificates),
    db
      .select({
        domainName: domains.domainName,
        publicCaCertificate: domains.publicCaCertificate,
        certProvided: domains.certProvided,
        projectId: backends.projectId,
      })
      .from(domains)
      .innerJoin(backends, eq(domains.backendId, backends.id)),
    db.select().from(certificateAttempts),
    db.select().from(certificateRenewalWindows),
  ]);
  return { certificateRows, domainRows, attemptRows, windowRows };
}

/** Expired certificates, and ACME certificates no domain asks for any more, go; returns those removed. */
async function removeUnwanted(db: Database, state: State, start: Date, warnings: string[]) {
  const wanted = new Set(
    state.domainRows
      .filter((domain) => domain.publicCaCertificate)
      .map((domain) => acmeCertificateName(domain.domainName)),
  );
  const removed: CertificateRow[] = [];
  for (const row of state.certificateRows) {
    if (row.source === "fallback") continue;
    if (row.notAfter <= start) {
      removed.push(row);
      warnings.push(
        `${row.source === "acme" ? "INFO" : "WARN"}: Certificate ${row.name} ended on ${row.notAfter.toISOString()} and was removed. It covered ${row.domainNames.join(", ")}`,
      );
    } else if (row.source === "acme" && !wanted.has(row.name)) {
      removed.push(row);
      warnings.push(
        `INFO: Certificate ${row.name} was removed: no domain asks for a public CA certificate for ${row.domainNames.join(", ")} any more`,
      );
    }
  }
  if (removed.length > 0) {
    // One JSON parameter whatever their number: D1 binds at most 100, and a refused delete would fail every run.
    await db.delete(certificates).where(
      inJsonList(
        certificates.id,
        removed.map((row) => row.id),
      ),
    );
  }
  return removed;
}

type Due = { domainName: string; renewal?: Renewal };

/**
 * The domains to order a certificate for: those asking for one without it, and those whose renewal came. The CA's
 * renewal windows read on the way are kept for the next runs, in one round trip before the orders start.
 */
async function dueDomains(
  db: Database,
  deps: MaintenanceDependencies,
  run: { state: State; removed: CertificateRow[]; start: Date; warnings: string[] },
): Promise<Due[]> {
  const { state, removed, start, warnings } = run;
  const acmeByName = new Map(
    state.certificateRows.filter((row) => !removed.includes(row)).map((row) => [row.name, row]),
  );
  const windows = new Map(state.windowRows.map((row) => [row.certificateId, row]));
  const due: Due[] = [];
  const asking = state.domainRows
    .filter((domain) => domain.publicCaCertificate)
    .map((domain) => domain.domainName)
    .sort();
  const candidates = asking.flatMap((domainName) => acmeByName.get(acmeCertificateName(domainName)) ?? []);
  // Reading a certificate's DER for its ARI ID costs: once per certificate and run.
  const ariIds = new Map(candidates.map((certificate) => [certificate.id, ariIdOf(certificate)]));
  const askable = renewalInfoDue(candidates, ariIds, windows, start, deps.settings.ACME_RENEWAL_INFO_PER_RUN);
  const answered: WindowRow[] = [];
  // Once the CA gives no answer, the run's later questions would fail at once, each with its own warning.
  const ca = { silent: false };
  for (const domainName of asking) {
    const current = acmeByName.get(acmeCertificateName(domainName));
    if (!current) {
      due.push({ domainName });
      continue;
    }
    const { renewal, window } = await renewalOf(deps, current, ariIds.get(current.id), {
      stored: windows.get(current.id),
      mayAsk: askable.has(current.id) && !ca.silent,
      warnings,
      ca,
    });
    if (window) answered.push(window);
    if (deps.now().getTime() >= renewal.at.getTime()) due.push({ domainName, renewal });
  }
  if (answered.length > 0) {
    const [first, ...rest] = answered.map((row) =>
      db
        .insert(certificateRenewalWindows)
        .values(row)
        .onConflictDoUpdate({ target: certificateRenewalWindows.certificateId, set: row }),
    );
    await db.batch([first, ...rest]);
  }
  return due;
}

/** Orders a certificate for each due domain whose back-off passed; true when at least one was obtained. */
async function obtainDue(
  db: Database,
  deps: MaintenanceDependencies,
  run: { due: Due[]; state: State; start: Date; warnings: string[] },
): Promise<boolean> {
  const { due, state, start, warnings } = run;
  const attempts = new Map(state.attemptRows.map((row) => [row.domainName, row]));
  const ready = (domainName: string) => {
    const nextDay = nextAttemptDay(attempts.get(domainName));
    return nextDay === undefined || utcDay(start) >= nextDay;
  };
  let prepared = false;
  let obtained = false;
  let ordered = 0;
  const orders = ordersPerRun(deps.settings);
  for (const [index, { domainName, renewal }] of due.entries()) {
    const attempt = attempts.get(domainName);
    if (ordered === orders && ready(domainName)) {
      // Past its orders the run would die at the Worker's 1,000 subrequests, mid-order.
      const waiting = due.slice(index).filter((next) => ready(next.domainName)).length;
      warnings.push(`INFO: ${waiting} more due past this run's ${orders} orders: another certificate run follows`);
      deps.queueFollowUp();
      break;
    }
    if (!ready(domainName)) {
      warnings.push(
        `WARN: no new attempt for ${domainName} before ${dayStart(nextAttemptDay(attempt)!)}: the last one failed (${attempt!.lastError ?? "the run ended"})`,
      );
      continue;
    }
    if (!prepared) {
      // Directory or account failures fail the whole run (the queue retries it later); no domain is charged for them.
      await deps.issuer.prepare();
      prepared = true;
    }
    await deps.keepLock();
    ordered++;
    const outcome = await attemptOne(db, deps, { domainName, renewal, attempt }, warnings);
    if (outcome === "obtained") obtained = true;
    if (outcome === "rate-limited" || outcome === "ca-unreachable") {
      // Every further order of this run would be refused too, and charged to a domain (other tenants' renewals
      // among them) as its failure: they wait for the next run instead.
      const waiting = due.slice(index + 1).filter((next) => ready(next.domainName)).length;
      const why = outcome === "rate-limited" ? "the CA limits this account's orders" : "the CA gave no answer";
      if (waiting > 0) warnings.push(`WARN: ${why}: ${waiting} more due, not tried until the next run`);
      break;
    }
  }
  return obtained;
}

/**
 * How many certificates one run orders: ACME_ORDERS_PER_RUN, fewer when the renewal questions it may ask take the
 * subrequests the orders would need (at least one, so that every run moves on).
 */
export function ordersPerRun(settings: Pick<ProxySettings, "ACME_RENEWAL_INFO_PER_RUN" | "ACME_ORDERS_PER_RUN">) {
  const left = WORKER_SUBREQUESTS - SUBREQUESTS_RESERVED_PER_CERTIFICATE_RUN - settings.ACME_RENEWAL_INFO_PER_RUN;
  return Math.max(1, Math.min(settings.ACME_ORDERS_PER_RUN, Math.floor(left / SUBREQUESTS_PER_ACME_ORDER)));
}

/** Names the certificates in use that end soon (after this run's renewals). */
async function warnEnding(
  db: Database,
  deps: MaintenanceDependencies,
  domainRows: State["domainRows"],
  start: Date,
  warnings: string[],
) {
  const remaining = await listCertificates(db);
  const { used } = selectCertificates(remaining, domainRows, (domain) => domain.projectId);
  const warnBefore = start.getTime() + deps.settings.CERT_WARN_DAYS * DAY_MS;
  for (const row of used) {
    const ending =
      row.source === "acme"
        ? start.getTime() > acmeWarningPoint(row, deps.settings.CERT_WARN_DAYS).getTime()
        : row.notAfter.getTime() < warnBefore;
    if (ending) warnings.push(endingWarning(row));
  }
}

// ---- when a certificate is renewed ----

interface Renewal extends RenewalOrder {
  /** The first run at or after this renews. */
  at: Date;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500);

/** The ARI ID of a certificate, or undefined when ARI cannot name it (no Authority Key Identifier, unreadable). */
function ariIdOf(certificate: CertificateRow): string | undefined {
  try {
    return ariCertificateId(readCertificatePem(certificate.certificatePem));
  } catch {
    return undefined;
  }
}

/**
 * The ids of the certificates whose renewal information may be asked for in this run, at most `limit`: those never
 * asked about (for their current ARI ID) first, then those whose Retry-After passed longest ago. Certificates whose
 * Retry-After has not passed are not asked anyway.
 */
function renewalInfoDue(
  candidates: readonly CertificateRow[],
  ariIds: ReadonlyMap<number, string | undefined>,
  windows: ReadonlyMap<number, WindowRow>,
  now: Date,
  limit: number,
): Set<number> {
  const due: { id: number; pollAt: number }[] = [];
  for (const certificate of candidates) {
    const ariId = ariIds.get(certificate.id);
    if (ariId === undefined) continue;
    const stored = windows.get(certificate.id);
    const pollAt = stored?.ariCertificateId === ariId ? stored.nextPollAt.getTime() : -Infinity;
    if (pollAt <= now.getTime()) due.push({ id: certificate.id, pollAt });
  }
  due.sort((a, b) => a.pollAt - b.pollAt || a.id - b.id);
  return new Set(due.slice(0, limit).map((entry) => entry.id));
}

/** The CA's RenewalInfo for a certificate, read; undefined when the CA offers none. Throws when it cannot be used. */
async function askRenewalInfo(
  issuer: CertificateIssuer,
  certificateId: string,
  certificate: CertificateRow,
): Promise<{ window: RenewalWindow; retryAfter: string | null } | undefined> {
  const answer = await issuer.renewalInfo(certificateId);
  return answer && { window: readRenewalInfo(answer.body, certificate), retryAfter: answer.retryAfter };
}

/**
 * When an ACME certificate is renewed. When the CA offers ACME Renewal Information (RFC 9773), at the point drawn in
 * its window; the CA is asked again only once its Retry-After has passed (the window is kept in
 * certificate_renewal_windows meanwhile: `window` is the row to store after a new answer). Otherwise, and for a
 * certificate ARI cannot name (no `certificateId`), when a third of its lifetime remains. An answer that fails or
 * cannot be used leaves the window the CA gave before, or the lifetime rule.
 */
async function renewalOf(
  deps: MaintenanceDependencies,
  certificate: CertificateRow,
  certificateId: string | undefined,
  context: { stored: WindowRow | undefined; mayAsk: boolean; warnings: string[]; ca: { silent: boolean } },
): Promise<{ renewal: Renewal; window?: WindowRow }> {
  const { stored, mayAsk, warnings } = context;
  const byLifetime = { renewal: { at: oneThirdLeft(certificate) } };
  if (!certificateId) return byLifetime;
  const known = stored?.ariCertificateId === certificateId ? stored : undefined;
  const knownWindow = known && {
    start: known.windowStart,
    end: known.windowEnd,
    ...(known.explanationUrl ? { explanationUrl: known.explanationUrl } : {}),
  };
  const now = deps.now();
  if (known && knownWindow && (!mayAsk || now.getTime() < known.nextPollAt.getTime()))
    return { renewal: { at: known.renewAt, window: knownWindow, replaces: certificateId } };
  if (!mayAsk) return byLifetime;

  let answer: Awaited<ReturnType<typeof askRenewalInfo>>;
  try {
    answer = await askRenewalInfo(deps.issuer, certificateId, certificate);
  } catch (error) {
    if (isCaUnreachable(error)) context.ca.silent = true;
    warnings.push(
      `WARN: no renewal information for certificate ${certificate.name} from the CA: ${errorText(error)}; ${known ? "the window it gave before stands" : "it is renewed when a third of its lifetime remains"}`,
    );
    return known && knownWindow
      ? { renewal: { at: known.renewAt, window: knownWindow, replaces: certificateId } }
      : byLifetime;
  }
  if (!answer) return byLifetime;
  const { window } = answer;
  const renewAt =
    known && knownWindow && sameWindow(knownWindow, window) ? known.renewAt : renewalPoint(window, deps.random());
  const row: WindowRow = {
    certificateId: certificate.id,
    ariCertificateId: certificateId,
    windowStart: window.start,
    windowEnd: window.end,
    renewAt,
    nextPollAt: nextPollAt(answer.retryAfter, now),
    explanationUrl: window.explanationUrl ?? null,
    checkedAt: now,
  };
  return { renewal: { at: renewAt, window, replaces: certificateId }, window: row };
}
