// Job definitions and the registry (pure, plain Node): a message is exactly its kind, run id and declared fields, and
// a kind is defined once.
import { describe, expect, it } from "vitest";
import { z } from "../../src/shared/zod";
import { defineJob, JobEnvelope, jobRegistry } from "../../src/jobs/define";

const run = async () => ({ warnings: [] });
const syncJob = defineJob({ kind: "sync", fields: { version: z.number().int().positive() }, run });

describe("defineJob", () => {
  it("reads a message of its kind with its fields", () => {
    expect(syncJob.message.parse({ kind: "sync", runId: 3, version: 7 })).toEqual({
      kind: "sync",
      runId: 3,
      version: 7,
    });
  });

  it.each([
    ["another kind", { kind: "other", runId: 3, version: 7 }],
    ["a missing run id", { kind: "sync", version: 7 }],
    ["a missing field", { kind: "sync", runId: 3 }],
    ["a field of the wrong type", { kind: "sync", runId: 3, version: "7" }],
    ["an unknown field", { kind: "sync", runId: 3, version: 7, extra: true }],
  ])("refuses %s", (_, body) => {
    expect(syncJob.message.safeParse(body).success).toBe(false);
  });

  it("reads the envelope of any kind, so the consumer can find the definition", () => {
    expect(JobEnvelope.parse({ kind: "whatever", runId: 1, more: 1 })).toEqual({ kind: "whatever", runId: 1 });
    expect(JobEnvelope.safeParse({ kind: "", runId: 1 }).success).toBe(false);
  });
});

describe("jobRegistry", () => {
  it("holds each definition by kind, with the schedules", () => {
    const schedules = { "0 * * * *": [() => [{ kind: "sync", version: 1 }]] };
    const registry = jobRegistry([syncJob], schedules);
    expect([...registry.jobs.keys()]).toEqual(["sync"]);
    expect(registry.jobs.get("sync")).toBe(syncJob);
    expect(registry.schedules).toBe(schedules);
  });

  it("refuses a kind defined twice", () => {
    const again = defineJob({ kind: "sync", fields: {}, run });
    expect(() => jobRegistry([syncJob, again], {})).toThrow("job kind sync is defined twice");
  });
});
