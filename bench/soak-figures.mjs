// The pure parts of `npm run bench:soak` (bench/soak.mjs): its options from the environment, the growth of each
// process's memory over the end of the run, and the printed table.

/** The longest stretch at the end of the run over which growth is judged (issue 32: the last 10 of 15 minutes). */
const GROWTH_WINDOW_MS = 10 * 60_000;

/**
 * @param {Record<string, string | undefined>} env
 * @returns {{ minutes: number, rate: number, sampleSeconds: number, keys: number, control: boolean }}
 */
export function soakOptions(env) {
  /** @param {string} name @param {number} fallback @param {number} min */
  const number = (name, fallback, min) => {
    const text = env[name];
    if (text === undefined || text === "") return fallback;
    const value = Number(text);
    if (!Number.isFinite(value) || value < min) throw new Error(`${name}: expected a number of at least ${min}`);
    return value;
  };
  return {
    minutes: number("SOAK_MINUTES", 15, 0.5),
    rate: number("SOAK_RATE", 50, 1),
    sampleSeconds: number("SOAK_SAMPLE_SECONDS", 30, 1),
    keys: Math.round(number("SOAK_KEYS", 5000, 1)),
    control: control(env.SOAK_CONTROL),
  };
}

/** SOAK_CONTROL: "1" (the default) runs the control arm (bench/soak-control.mjs) beside the soak, "0" does not. */
function control(/** @type {string | undefined} */ text) {
  if (text === undefined || text === "" || text === "1") return true;
  if (text === "0") return false;
  throw new Error("SOAK_CONTROL: expected 0 or 1");
}

/**
 * How long the growth is measured over: the last 10 minutes, or in a shorter run its last two thirds (the first third
 * is the warm-up: caches filling, the first objects created).
 * @param {number} runMs
 */
export function growthWindowMs(runMs) {
  return Math.min(GROWTH_WINDOW_MS, (runMs * 2) / 3);
}

/** @typedef {{ atMs: number, kib: Record<string, number | undefined> }} Sample */

/**
 * Each process's growth from the sample nearest the window's start to the last sample, in per cent of the first.
 * @param {Sample[]} samples in time order
 * @param {number} windowMs
 * @returns {{ fromMs: number, toMs: number, growth: Record<string, { from: number, to: number, percent: number }> }}
 */
export function growth(samples, windowMs) {
  if (samples.length < 2) throw new Error("growth needs at least two samples");
  const last = samples[samples.length - 1];
  const wantedStart = last.atMs - windowMs;
  const first = samples.reduce((best, sample) =>
    Math.abs(sample.atMs - wantedStart) < Math.abs(best.atMs - wantedStart) ? sample : best,
  );
  /** @type {Record<string, { from: number, to: number, percent: number }>} */
  const result = {};
  for (const [name, to] of Object.entries(last.kib)) {
    const from = first.kib[name];
    if (from === undefined || to === undefined || from === 0) continue;
    result[name] = { from, to, percent: ((to - from) / from) * 100 };
  }
  return { fromMs: first.atMs, toMs: last.atMs, growth: result };
}

/** KiB as MiB with one decimal. @param {number | undefined} kib */
const mib = (kib) => (kib === undefined ? "-" : (kib / 1024).toFixed(1));

/**
 * The samples as a Markdown table, one column per process (MiB).
 * @param {Sample[]} samples @param {string[]} names
 */
export function sampleTable(samples, names) {
  const header = `| t | ${names.join(" | ")} |`;
  const rule = `|---|${names.map(() => "---").join("|")}|`;
  const rows = samples.map(
    (sample) => `| ${Math.round(sample.atMs / 1000)} s | ${names.map((name) => mib(sample.kib[name])).join(" | ")} |`,
  );
  return [header, rule, ...rows].join("\n");
}

/** The processes the control arm has a counterpart of, by the soak's labels. */
const CONTROLLED = [
  ["workerd user", "control workerd user"],
  ["workerd proxy", "control workerd proxy"],
];

/**
 * Each workerd's growth beside its control's (bench/soak-control.mjs), in MiB and per cent: what the project's code
 * adds to what the runtime and wrangler's proxy grow by themselves.
 * @param {Record<string, { from: number, to: number, percent: number }>} byName growth().growth
 * @returns {{ name: string, mib: number, percent: number, controlMib: number, controlPercent: number }[]}
 */
export function controlComparison(byName) {
  return CONTROLLED.flatMap(([name, control]) => {
    const own = byName[name];
    const theirs = byName[control];
    if (!own || !theirs) return [];
    return [
      {
        name,
        mib: (own.to - own.from) / 1024,
        percent: own.percent,
        controlMib: (theirs.to - theirs.from) / 1024,
        controlPercent: theirs.percent,
      },
    ];
  });
}
