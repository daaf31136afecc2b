// The gateway's message size limit (plain Node): the Worker's default, read from RATELIMIT_MAX_REQUEST_BYTES, and a
// malformed value refused at start naming the variable.
import { describe, expect, it } from "vitest";
import { gatewaySettings } from "../../grpc-gateway/settings.mjs";

describe("gatewaySettings: RATELIMIT_MAX_REQUEST_BYTES", () => {
  it("defaults to the Worker's 1 MiB, and reads a value", () => {
    expect(gatewaySettings({}).RATELIMIT_MAX_REQUEST_BYTES).toBe(1024 * 1024);
    expect(gatewaySettings({ RATELIMIT_MAX_REQUEST_BYTES: "" }).RATELIMIT_MAX_REQUEST_BYTES).toBe(1024 * 1024);
    expect(gatewaySettings({ RATELIMIT_MAX_REQUEST_BYTES: "2048" }).RATELIMIT_MAX_REQUEST_BYTES).toBe(2048);
  });

  it.each(["0", "-1", "1.5", "lots"])("refuses %j naming the variable", (value) => {
    expect(() => gatewaySettings({ RATELIMIT_MAX_REQUEST_BYTES: value })).toThrowError(
      /^invalid gateway settings: RATELIMIT_MAX_REQUEST_BYTES: /,
    );
  });
});
