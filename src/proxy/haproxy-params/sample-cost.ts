// What a tenant's sample fetches and ACL matches may cost HAProxy a request, besides regexes (regex-cost.ts): an ACL
// on hdr() fetches and matches once per comma-separated value, each use of an ACL evaluates all its lines again, and
// HAProxy's watchdog kills the whole process (every tenant's traffic) past a few seconds. Counted, in character tests
// on a LONGEST_TEXT-byte request as the regex bound is, per evaluation; a backend's total is capped.
import { LONGEST_TEXT } from "./regex-work";

/**
 * Most work one request (and its response) may cost through one backend's fetches and matches: about 80 ms, the
 * order of the regex budget's 8 runs of 10 ms.
 */
export const MAX_SAMPLE_WORK_PER_BACKEND = 80_000_000;

/**
 * A fetch that reads headers, cookies or URL parameters one value at a time: HAProxy 2.6 took 50 ns a value on 7000
 * equal ones, up to 200 ns on 4600 distinct ones (ACLs on hdr(), CPU time on a loaded machine): about 1 ms.
 */
export const VALUES_FETCH_WORK = LONGEST_TEXT * 64;

/** Any other fetch, and each converter: at most a pass over the text. */
export const FETCH_WORK = LONGEST_TEXT;

/**
 * A pattern, each time its ACL is evaluated: compared with every value (about 5 ns each, measured on 4600 distinct
 * values, -i -m str, where HAProxy compares every pattern of the list).
 */
export const PATTERN_WORK = LONGEST_TEXT * 2;

/** Matches that search the text for the pattern (acl.c pat_match_sub, match_word): a pass per pattern character. */
const SCANNING_MATCHES: ReadonlySet<string> = new Set(["sub", "dir", "dom"]);

/** Fetches that walk a list of values (hdr, cook, shdr, hdr_cnt, urlp...): read from the name, conservatively. */
const WALKS_VALUES = /hdr|cook|urlp|url_param/;

export const fetchWork = (fetch: string) => (WALKS_VALUES.test(fetch) ? VALUES_FETCH_WORK : FETCH_WORK);

/** What one pattern costs an evaluation of its ACL, by how the ACL matches. */
export const patternWork = (match: string, pattern: string) =>
  PATTERN_WORK + (SCANNING_MATCHES.has(match) ? LONGEST_TEXT * pattern.length : 0);

let budget: { spent: number } | undefined;
let measuring: { work: number } | undefined;

/** Runs one backend's (or one server line's) vetting with its own count of sample work (vetting is synchronous). */
export function withSampleBudget<T>(vet: () => T): T {
  const outer = { budget, measuring };
  budget = { spent: 0 };
  measuring = undefined;
  try {
    return vet();
  } finally {
    ({ budget, measuring } = outer);
  }
}

/**
 * Runs `check` (an `acl` line) without charging what it spends, which is what each later use of the ACL will cost.
 */
export function measuredWork<T>(check: () => T): { value: T; work: number } {
  const outer = measuring;
  measuring = { work: 0 };
  try {
    const value = check();
    return { value, work: measuring.work };
  } finally {
    measuring = outer;
  }
}

/** Counts `work` more a request may cost; the reason to refuse it, if any. */
export function spendSampleWork(work: number): string | undefined {
  if (measuring) {
    measuring.work += work;
    return undefined;
  }
  if (!budget) return undefined;
  budget.spent += work;
  if (budget.spent <= MAX_SAMPLE_WORK_PER_BACKEND) return undefined;
  return (
    `more than ${MAX_SAMPLE_WORK_PER_BACKEND} character tests a request in one backend for sample fetches and ACL ` +
    `matches (about 80 ms of HAProxy's time; each evaluation costs: a header, cookie or URL parameter fetch ` +
    `${VALUES_FETCH_WORK}, another fetch or a converter ${FETCH_WORK}, each pattern ${PATTERN_WORK}, and a -m sub, ` +
    `dir or dom pattern ${LONGEST_TEXT} more per character; a named ACL costs all its acl lines at each use): ` +
    `use each ACL in fewer conditions, give ACLs fewer patterns or acl lines, match shorter substrings, ` +
    `or read headers and cookies in fewer places`
  );
}
