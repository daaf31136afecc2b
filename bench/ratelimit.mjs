#!/usr/bin/env node
// `npm run bench:ratelimit`: what a rate-limit decision costs in the Durable Object store when nothing is warm, for
// each counter layout (COUNTER_OBJECT_LAYOUT per_key, then sharded; `--layout per_key|sharded` runs one). Each layout
// gets a fresh wrangler dev (fresh state directory, so no counter object exists), the bench configuration (domain
// bench: key `client` with a limit never reached, key `limited` at 100 per hour) and nothing warmed but the floor
// route (2 s of GET /test/ping, which touches no counter). Then, autocannon at 32 connections (BENCH_CONNECTIONS)
// for 10 s (BENCH_DURATION), every key new to this run and to its round:
//   (a) GET /test/ping, the floor: the same Worker and dev server doing no rate-limit work;
//   (b) POST /json on one hot key (its first request creates its counter);
//   (c) POST /json over 1000 keys never seen before, cycled;
//   (d) long tail: POST /json, every request a new key, for 20 s (BENCH_TAIL_DURATION); its non-2xx and errors;
//   (e) new-key latency: 200 requests one at a time, each a new key, interleaved with 200 on one warm key (so both
//       see the same machine load): median and p90 of each, and new/warm of the medians;
//   (f) exactness: 600 concurrent POST /json on one new key of `limited`: exactly 100 must get 200 and 500 get 429,
//       or the process exits 1 at the end.
// Each figure is a ratio to the floor of the same run. For (b) to (d), the counter objects' own statistics on /stats
// (ratelimit.durable_object.rows_written, .commits, .objects_started) give rows written, commits and objects started
// per 1000 decisions (2xx answers): /stats is read before and after each workload; the objects flush theirs to the
// aggregate up to 5 s after the activity (and a write-behind may delay a row by up to 2 s), so after a workload the
// bench waits 8 s (BENCH_STATS_WAIT_MS), then until two reads a second apart agree; that wait is not measured.
// BENCH_ROUNDS (default 1) repeats (a) to (f) with new keys; each workload is then reported by its median run.
// The targets (issue 18), printed as met or missed after each layout: per_key: (c) >= 0.6, (d) >= 0.13, (e) new/warm
// <= 3; sharded: (c) >= 0.6, (d) >= 0.5, (e) <= 1.5; both: (b) >= 0.8, no non-2xx or error in 20 s of (d), (f) exact.
// BENCH_BASELINE_REF=<git ref>: the same workloads, per_key only, also on that commit (a `git worktree add` in a
// temporary directory, node_modules a symlink to this one's, removed at the end), printed as "before" figures beside
// the new ones; where that code does not count the objects' rows, those columns say n/a.
// `--backend redis` (a redis-server) or `--backend memcache` (a memcached), each started on a free port: (a) the
// floor, (b) 1000 distinct keys (warmed first) and (c) one hot key, with the counters in that store and in Durable
// Objects (two dev servers, each workload run on one then the other), the ratios to the floor and to the Durable
// Object store.
// `--stats`: statistics off (DISABLE_STATS=true) against on (the shipped settings: counted in the isolate, flushed
// to the aggregate every STATS_FLUSH_INTERVAL), two dev servers, each of those three warmed workloads run on both in
// turn, 4 times (BENCH_ROUNDS), which side goes first alternating; prints the on/off throughput ratio per workload.
// The target is 0.9 or more (statistics cost at most 10 %).
// `--algorithms`: the rule algorithms (fixed_window, sliding_window, token_bucket) on one fresh per_key server: for
// each, one hot key and 1000 cold keys (ratios to the floor, rows, commits and objects per 1000 decisions), then
// CONCURRENT requests on one new key of its rule limited to LIMIT, which must admit exactly LIMIT (else exit 1).
// `--hot`: one hot key per counter mode and the capacity run (issue 29), in bench/ratelimit-hot.mjs.
import { stopAll, stopAllOnSignals } from "../test/support/processes.mjs";
import { BACKEND, compareBackends, compareStats } from "./ratelimit-warmed.mjs";
import { compareLayouts } from "./ratelimit-layouts.mjs";
import { compareAlgorithms } from "./ratelimit-algorithms.mjs";

stopAllOnSignals();

const STATS = process.argv.includes("--stats");
const ALGORITHMS = process.argv.includes("--algorithms");

async function main() {
  if (process.argv.includes("--hot")) return (await import("./ratelimit-hot.mjs")).hotBench(process.argv);
  if (STATS) return compareStats();
  if (ALGORITHMS) return compareAlgorithms();
  if (BACKEND === "durable-object") return compareLayouts();
  return compareBackends();
}

try {
  await main();
} finally {
  await stopAll();
}
