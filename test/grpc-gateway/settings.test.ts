// The gateway's settings (plain Node): the message size limit (the Worker's default, read from
// RATELIMIT_MAX_REQUEST_BYTES), booleans read as the Worker reads them, malformed values refused naming the variable.
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

describe("gatewaySettings: booleans", () => {
  it.each([
    ["true", true],
    ["1", true],
    ["T", true],
    ["False", false],
    ["0", false],
    ["f", false],
  ])("reads %j as %s, as the Worker and Go's strconv.ParseBool do", (text, expected) => {
    expect(gatewaySettings({ XDS_CLIENT_BACKOFF_JITTER: text }).XDS_CLIENT_BACKOFF_JITTER).toBe(expected);
  });

  it("refuses another word naming the variable", () => {
    expect(() => gatewaySettings({ XDS_CLIENT_BACKOFF_JITTER: "yes" })).toThrowError(
      /^invalid gateway settings: XDS_CLIENT_BACKOFF_JITTER: /,
    );
  });
});
