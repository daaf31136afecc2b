// The D1 work of the benchmarks' requests, from the `Server-Timing: d1;desc="..."` header the Worker answers with
// when D1_USAGE_HEADER is on (src/shared/d1-usage.ts) and the floor Workers (bench/d1-floor, bench/news-floor) always:
// round trips to D1 (a batch is one), statements, and the rows D1 reports written and read. Statements D1 answers
// without its meta (raw(), which drizzle's selects use, first(), exec()) are "unmetered": their rows are in neither
// rows figure. Each bench sums the answers of its timed requests and prints the sums per 1,000 operations.

/** The figures of the header, as named there. */
export const D1_FIELDS = ["calls", "statements", "rows_written", "rows_read", "unmetered"];

/**
 * The D1 work an answer reports, or undefined when it carries no `d1` entry (the setting off, or code without it).
 * @param {{ headers: { get(name: string): string | null } }} response
 * @returns {Record<string, number> | undefined}
 */
export function d1UsageOf(response) {
  const match = /(?:^|,)\s*d1;desc="([^"]*)"/.exec(response.headers.get("server-timing") ?? "");
  if (!match) return undefined;
  const usage = Object.fromEntries(D1_FIELDS.map((field) => [field, 0]));
  for (const pair of match[1].split(" ")) {
    const [name, value] = pair.split("=");
    if (name in usage) usage[name] = Number(value);
  }
  return usage;
}

/** The sums of the D1 work of a series of answers, and how many answers carried none. */
export class D1Tally {
  answers = 0;
  missing = 0;
  sums = Object.fromEntries(D1_FIELDS.map((field) => [field, 0]));

  /** Adds an answer's D1 work (a response, or what d1UsageOf read from it). */
  add(usageOrResponse) {
    const usage = usageOrResponse?.headers ? d1UsageOf(usageOrResponse) : usageOrResponse;
    this.answers++;
    if (!usage) return void this.missing++;
    for (const field of D1_FIELDS) this.sums[field] += usage[field];
  }

  /**
   * Each figure per 1,000 operations, an answer being `operationsPerAnswer` operations; undefined when any answer
   * carried no figures (they would be short).
   */
  perThousand(operationsPerAnswer = 1) {
    if (this.answers === 0 || this.missing > 0) return undefined;
    const operations = this.answers * operationsPerAnswer;
    return Object.fromEntries(D1_FIELDS.map((field) => [field, (this.sums[field] / operations) * 1000]));
  }
}

/** A figure per 1,000 with the digits its size needs. @param {number} value */
const figure = (value) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));

const COLUMNS = ["calls", "statements", "rows written", "rows read", "unmetered"];

/** The header line of a D1 table whose labels are `width` wide. */
export const d1Header = (width, unit = "1,000 requests") =>
  `${`D1 per ${unit}`.padEnd(width)} ${COLUMNS.map((column) => `${column} `.padStart(12)).join(" ")}`.trimEnd();

/** What a D1 table's "+" means, for the line after it. */
export const D1_FOOTNOTE =
  "+: at least; the rows of unmetered statements (D1 answers raw(), which drizzle's selects use, without them) are not in it";

/**
 * One line of a D1 table: the tally's figures per 1,000 operations, or why there are none. The rows figures of a tally
 * with unmetered statements are marked "+": they leave those statements' rows out.
 * @param {string} label @param {D1Tally} tally @param {number} width @param {number} [operationsPerAnswer]
 */
export function d1Line(label, tally, width, operationsPerAnswer = 1) {
  const per = tally.perThousand(operationsPerAnswer);
  if (!per) return `${label.padEnd(width)} n/a (${tally.missing} of ${tally.answers} answers without Server-Timing d1)`;
  const atLeast = per.unmetered > 0 ? "+" : " ";
  const cell = (field) => (figure(per[field]) + (field.startsWith("rows_") ? atLeast : " ")).padStart(12);
  return `${label.padEnd(width)} ${D1_FIELDS.map(cell).join(" ")}`.trimEnd();
}
