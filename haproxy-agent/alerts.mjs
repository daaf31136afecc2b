// Which of `haproxy -c`'s ALERT lines a refusal lists. The control plane leaves out the tenant backends they name and
// checks again, a round each, so every section HAProxy refused is named at least once before any is named twice: one
// backend with hundreds of refused servers must not crowd the others out of the list.

/** Most ALERT lines a refusal lists, the longest kept of each, and the most characters of all of them together. */
export const MAX_ALERTS = 256;
export const MAX_ALERT_LENGTH = 400;
/** With the quoted output (4,000 characters, twice), the answer stays under the control plane's 64 KiB. */
export const MAX_ALERT_CHARACTERS = 20_000;

const ALERT = /^\[ALERT\]\s*(?:\(\d+\)\s*)?:\s?(.*)$/;
/** A line of haproxy.cfg that opens a section (section bodies are indented, and tenants cannot write a line). */
const SECTION =
  /^(?:global|defaults|frontend|backend|listen|userlist|peers|resolvers|mailers|program|http-errors|ring|cache)(?:\s|$)/;
/** The places HAProxy's own prefix names, as the control plane reads them (src/proxy/haproxy/isolation.ts). */
const AT_LINE = /^(?:config\s*:\s*)?(?:parsing\s+)?\[(?:[^\]]*\/)?haproxy\.cfg:(\d+)\]/;
const OF_PROXY = /^(?:config\s*:\s*)?(?:backend|Proxy|proxy)\s+'([^']+)'/;
const OF_SERVER = /^(?:config\s*:\s*)?'server ([^/']+)\//;

/**
 * The line numbers (1-based, ascending) where the sections of a configuration start.
 * @param {string} config
 */
function sectionStarts(config) {
  /** @type {number[]} */
  const starts = [];
  const lines = config.split("\n");
  for (let index = 0; index < lines.length; index++) if (SECTION.test(lines[index])) starts.push(index + 1);
  return starts;
}

/**
 * What an ALERT line is about: the section holding the haproxy.cfg line it names, else the proxy HAProxy's prefix
 * names, else the line itself.
 * @param {string} alert @param {number[]} starts
 */
function subjectOf(alert, starts) {
  const atLine = AT_LINE.exec(alert);
  if (atLine) {
    const line = Number(atLine[1]);
    let low = 0;
    let high = starts.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (starts[middle] <= line) low = middle + 1;
      else high = middle;
    }
    return `section ${low === 0 ? 0 : starts[low - 1]}`;
  }
  const named = OF_PROXY.exec(alert) ?? OF_SERVER.exec(alert);
  return named ? `proxy ${named[1]}` : `text ${alert}`;
}

/**
 * The ALERT lines of haproxy's output without their "[ALERT] (pid) : " prefix, bounded: the first of each section, in
 * their order, then the others in theirs while the bounds allow (so that any first part of the list still names
 * every section it can).
 * @param {string} output haproxy's output
 * @param {string} [config] the haproxy.cfg it checked, to tell which section a line number falls in
 * @returns {string[]}
 */
export function alertLines(output, config = "") {
  const starts = sectionStarts(config);
  /** @type {string[]} */
  const alerts = [];
  for (const line of output.split("\n")) {
    const match = ALERT.exec(line);
    if (match) alerts.push(match[1].slice(0, MAX_ALERT_LENGTH));
  }
  const seen = new Set();
  const firsts = alerts.map((alert) => {
    const subject = subjectOf(alert, starts);
    if (seen.has(subject)) return false;
    seen.add(subject);
    return true;
  });
  /** Indices, in the order they are listed. */
  const chosen = new Set();
  let characters = 0;
  const choose = (/** @type {number} */ index) => {
    if (chosen.size === MAX_ALERTS || characters + alerts[index].length > MAX_ALERT_CHARACTERS) return;
    chosen.add(index);
    characters += alerts[index].length;
  };
  alerts.forEach((_, index) => firsts[index] && choose(index));
  alerts.forEach((_, index) => firsts[index] || choose(index));
  return [...chosen].map((index) => alerts[index]);
}
