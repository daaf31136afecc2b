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

describe("gatewaySettings: integers and numbers as Go's strconv reads them", () => {
  it.each([" ", "8081.0", "8e3", "08081"])(
    "refuses GRPC_PORT %j, which Go refuses though Number() may take it",
    (value) => {
      expect(() => gatewaySettings({ GRPC_PORT: value })).toThrow(
        new Error("invalid gateway settings: GRPC_PORT: expected a whole number"),
      );
    },
  );

  it("reads what Go's ParseInt reads with base 0 (the reference's envconfig), and keeps the bounds' own messages", () => {
    const ports = ["8081", "0", "+8081", "0x1F91", "0o17", "017", "0b101"].map(
      (value) => gatewaySettings({ GRPC_PORT: value }).GRPC_PORT,
    );
    expect(ports).toEqual([8081, 0, 8081, 8081, 15, 15, 5]);
    expect(() => gatewaySettings({ GRPC_PORT: "-1" })).toThrow(
      new Error("invalid gateway settings: GRPC_PORT: Too small: expected number to be >=0"),
    );
    expect(() => gatewaySettings({ GRPC_PORT: "65536" })).toThrow(
      new Error("invalid gateway settings: GRPC_PORT: Too big: expected number to be <=65535"),
    );
  });

  it.each([" ", "0x1", "1e"])("refuses XDS_CLIENT_BACKOFF_RANDOM_FACTOR %j", (value) => {
    expect(() => gatewaySettings({ XDS_CLIENT_BACKOFF_RANDOM_FACTOR: value })).toThrow(
      new Error("invalid gateway settings: XDS_CLIENT_BACKOFF_RANDOM_FACTOR: expected a decimal number from 0 to 1"),
    );
  });

  it("reads XDS_CLIENT_BACKOFF_RANDOM_FACTOR in Go's decimal forms", () => {
    const factors = ["0.25", ".5", "5e-1", "+0.5", "1"].map(
      (value) => gatewaySettings({ XDS_CLIENT_BACKOFF_RANDOM_FACTOR: value }).XDS_CLIENT_BACKOFF_RANDOM_FACTOR,
    );
    expect(factors).toEqual([0.25, 0.5, 0.5, 0.5, 1]);
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

describe("gatewaySettings: durations every call or connection would trip over at once", () => {
  it.each(["RATELIMIT_UPSTREAM_CONNECT_TIMEOUT", "RATELIMIT_UPSTREAM_TIMEOUT"])("refuses 0 for %s", (name) => {
    expect(() => gatewaySettings({ [name]: "0s" })).toThrowError(
      new RegExp(`^invalid gateway settings: ${name}: must be more than 0`),
    );
  });

  it.each(["RATELIMIT_UPSTREAM_TIMEOUT", "GRPC_MAX_CONNECTION_AGE", "GRPC_MAX_CONNECTION_AGE_GRACE"] as const)(
    "refuses a %s past Node's longest timer, and takes one just under it",
    (name) => {
      expect(() => gatewaySettings({ [name]: "720h" })).toThrowError(
        new RegExp(`^invalid gateway settings: ${name}: must be at most 596h`),
      );
      expect(gatewaySettings({ [name]: "596h" })[name]).toBe(596 * 3_600_000);
    },
  );

  it("rounds a fractional duration up to whole milliseconds (the Worker reads connect-timeout-ms as an integer)", () => {
    const settings = gatewaySettings({
      RATELIMIT_UPSTREAM_TIMEOUT: "2500.5ms",
      RATELIMIT_UPSTREAM_CONNECT_TIMEOUT: "1ns",
    });
    expect([settings.RATELIMIT_UPSTREAM_TIMEOUT, settings.RATELIMIT_UPSTREAM_CONNECT_TIMEOUT]).toEqual([2501, 1]);
  });

  it("reads a connection age of 0 as no limit, as grpc-go does", () => {
    const settings = gatewaySettings({ GRPC_MAX_CONNECTION_AGE: "0s", GRPC_MAX_CONNECTION_AGE_GRACE: "0" });
    expect([settings.GRPC_MAX_CONNECTION_AGE, settings.GRPC_MAX_CONNECTION_AGE_GRACE]).toEqual([undefined, undefined]);
  });
});
