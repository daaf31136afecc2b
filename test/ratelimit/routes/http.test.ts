// POST /json through the real Worker, with counters in real Durable Objects and a frozen clock.
import { describe, expect, it } from "vitest";
import { callJson } from "../../support/worker-http";
import { descriptor } from "../../support/ratelimit-calls";
import { atNowWithConfig, DECISION_CONFIG, decisionSuite } from "../../support/ratelimit-decision-suite";
import { workerWith } from "../../support/ratelimit-stores";

// The suite calls the Worker's fetch handler directly: every call through the test pool's `exports.default` wraps
// the entrypoint's prototype in one more Proxy (cloudflare/workers-sdk#15092), so the suite's 1800 concurrent calls
// would slow each later call down until the stack overflows.
const { rateLimit } = workerWith({});

atNowWithConfig({ "rl.yaml": DECISION_CONFIG });

describe("POST /json", () => {
  decisionSuite(rateLimit);

  it.each([
    ["an unreadable body", "{not json", "request body is not valid JSON"],
    ["an unknown field", { domain: "rl", descriptors: [descriptor(["a", "b"])], extra: 1 }, "extra: unknown field"],
    ["an empty domain", { domain: "", descriptors: [descriptor(["a", "b"])] }, "rate limit domain must not be empty"],
    ["no descriptors", { domain: "rl", descriptors: [] }, "rate limit descriptor list must not be empty"],
    [
      "an override without a unit",
      { domain: "rl", descriptors: [{ entries: [{ key: "a", value: "b" }], limit: { requestsPerUnit: 5 } }] },
      "descriptor 0: limit override needs a unit",
    ],
  ])("refuses %s with a 400 naming the problem", async (_label, body, message) => {
    const response = await callJson("/json", "POST", body);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await response.text()).toBe(message);
  });
});
