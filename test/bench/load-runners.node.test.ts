// The wrk runner of the hot-key bench reads wrk's own summary: rates, percentiles, non-2xx and socket errors.
import { describe, expect, it } from "vitest";
import { loadRunner, parseWrkSummary, wrkMs, wrkRun } from "../../bench/load-runners.mjs";

const SUMMARY = `Running 2s test @ http://127.0.0.1:8787/json
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    30.12ms   10.00ms   1.02s    80.00%
    Req/Sec     1.00k   100.00     1.20k    70.00%
  Latency Distribution
     50%  812.00us
     75%   31.00ms
     90%   45.00ms
     99%    1.02s
  4000 requests in 2.00s, 2.00MB read
  Non-2xx or 3xx responses: 7
  Socket errors: connect 0, read 2, write 0, timeout 1
Requests/sec:   2000.00
Transfer/sec:      1.00MB
`;

describe("wrk's summary", () => {
  it("reads durations in wrk's units as milliseconds", () => {
    expect([wrkMs("812.00us"), wrkMs("29.31ms"), wrkMs("1.02s"), wrkMs("2.00m")]).toEqual([
      0.812, 29.31, 1020, 120_000,
    ]);
    expect(() => wrkMs("12 ms")).toThrow("wrk: unreadable duration 12 ms");
  });

  it("gives decisions, answers, percentiles and what went wrong", () => {
    expect(parseWrkSummary(SUMMARY)).toEqual({
      seconds: 2,
      decisions: 3993,
      answered: 4000,
      p50: 0.812,
      p99: 1020,
      bad: 10,
      codes: " non-2xx×7 socket-errors×3",
    });
  });

  it("refuses output without a summary", () => {
    expect(() => parseWrkSummary("unable to connect to 127.0.0.1:1 Connection refused")).toThrow(
      "wrk: no summary in its output",
    );
  });

  it("names the tools BENCH_HOT_TOOL may pick", () => {
    expect(loadRunner("wrk")).toBe(wrkRun);
    expect(() => loadRunner("ab")).toThrow("BENCH_HOT_TOOL must be autocannon or wrk, not ab");
  });
});
