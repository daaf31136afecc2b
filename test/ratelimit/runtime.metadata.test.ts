// Rule metadata over the wire: PUT /rlconfig/files refuses what a protobuf Struct cannot hold with the reference's
// message and keeps the set it had; `!!binary` metadata that is text reaches /json's dynamicMetadata decoded; an
// infinite number loads (structpb takes it) and /json, which cannot write it, answers 500 as the reference's does.
import { describe, expect, it } from "vitest";
import { descriptor, putConfig } from "../support/ratelimit-calls";
import { atNowWithConfig } from "../support/ratelimit-decision-suite";
import { workerWith } from "../support/ratelimit-stores";
import { okStatus } from "../support/ratelimit-statuses";

const GOOD = `
domain: wire-meta
descriptors:
  - key: plan
    metadata:
      note: !!binary aMOpbGxv
      limits:
        yes: 1
    rate_limit:
      unit: hour
      requests_per_unit: 10
  - key: odd
    metadata:
      ratio: .inf
    rate_limit:
      unit: hour
      requests_per_unit: 10
`;

const BAD = `domain: wire-bad
descriptors:
  - key: k
    metadata:
      raw: !!binary aMOp/w==
`;

// At NOW, 2030-01-01T00:00:30Z: 30 s into the hour.
atNowWithConfig({ "good.yaml": GOOD });

const send = workerWith({ RESPONSE_DYNAMIC_METADATA: "true" }).rateLimit;

describe("metadata over the wire", () => {
  it("refuses a set whose metadata is not UTF-8 with the reference's message, and keeps the set it had", async () => {
    const refused = await putConfig({ "good.yaml": GOOD, "bad.yaml": BAD });
    expect([refused.status, refused.headers.get("content-type"), await refused.text()]).toEqual([
      400,
      "text/plain; charset=UTF-8",
      'bad.yaml: error parsing metadata: proto: invalid UTF-8 in string: "h\u00e9\\xff"',
    ]);
    const answer = await send({ domain: "wire-meta", descriptors: [descriptor(["plan", "kept"])] });
    expect(answer.status).toBe(200);
  });

  it("answers !!binary metadata decoded, and inner keys as the reference names them", async () => {
    const answer = await send({ domain: "wire-meta", descriptors: [descriptor(["plan", "binary"])] });
    expect([answer.status, answer.body]).toEqual([
      200,
      {
        overallCode: "OK",
        statuses: [okStatus(10, "HOUR", 9, "3570s")],
        dynamicMetadata: {
          domain: "wire-meta",
          descriptors: [{ entries: ["plan=binary"] }],
          metadata: { note: "héllo", limits: { true: 1 } },
        },
      },
    ]);
  });

  it("loads an infinite number, and answers 500 on /json only when it would be written", async () => {
    const written = await send({ domain: "wire-meta", descriptors: [descriptor(["odd", "inf"])] });
    expect([written.status, written.body]).toEqual([500, "Internal Server Error"]);
    const off = await workerWith({}).rateLimit({ domain: "wire-meta", descriptors: [descriptor(["odd", "inf"])] });
    expect(off.status).toBe(200);
  });
});
