// The gateway's xDS settings (gatewaySettings, plain Node): the reference's defaults, every variable read, and the
// malformed or contradictory values refused at start.
import { describe, expect, it } from "vitest";
import { gatewaySettings } from "../../grpc-gateway/settings.mjs";

describe("gatewaySettings: xDS", () => {
  const HEADERS_PROBLEM =
    "CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: expected CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS as name:value pairs " +
    "separated by commas";
  const NAME_PROBLEM = 'a gRPC metadata name has only letters, digits, "_", "." and "-", and no "-bin" suffix';

  it("has the reference's defaults", () => {
    expect(gatewaySettings({})).toMatchObject({
      CONFIG_TYPE: "FILE",
      FORCE_START_WITHOUT_INITIAL_CONFIG: false,
      CONFIG_GRPC_XDS_NODE_ID: "default",
      CONFIG_GRPC_XDS_NODE_METADATA: [],
      CONFIG_GRPC_XDS_SERVER_URL: "localhost:18000",
      CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: 3_000,
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: 10_000,
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: 60_000,
      XDS_CLIENT_BACKOFF_RANDOM_FACTOR: 0.5,
      XDS_CLIENT_BACKOFF_JITTER: true,
      XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: 0,
      CONFIG_GRPC_XDS_SERVER_USE_TLS: false,
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: [],
    });
    const settings = gatewaySettings({});
    const unset: (keyof typeof settings)[] = [
      "RATELIMIT_ADMIN_TOKEN",
      "CONFIG_GRPC_XDS_SERVER_TLS_CACERT",
      "CONFIG_GRPC_XDS_CLIENT_TLS_CERT",
      "CONFIG_GRPC_XDS_CLIENT_TLS_KEY",
      "CONFIG_GRPC_XDS_SERVER_TLS_SAN",
    ];
    expect(unset.filter((name) => settings[name] !== undefined)).toEqual([]);
  });

  it("reads every xDS variable", () => {
    const settings = gatewaySettings({
      CONFIG_TYPE: "GRPC_XDS_SOTW",
      FORCE_START_WITHOUT_INITIAL_CONFIG: "true",
      RATELIMIT_ADMIN_TOKEN: "admin-token",
      CONFIG_GRPC_XDS_NODE_ID: "node-7",
      CONFIG_GRPC_XDS_NODE_METADATA: "zone=eu, team = a=b",
      CONFIG_GRPC_XDS_SERVER_URL: "xds.internal:9000",
      CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: "500ms",
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "1s",
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: "2m",
      XDS_CLIENT_BACKOFF_RANDOM_FACTOR: "0.2",
      XDS_CLIENT_BACKOFF_JITTER: "false",
      XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: "1048576",
      CONFIG_GRPC_XDS_SERVER_USE_TLS: "1",
      CONFIG_GRPC_XDS_SERVER_TLS_CACERT: "/ca.pem",
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: "/cert.pem",
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "/key.pem",
      CONFIG_GRPC_XDS_SERVER_TLS_SAN: "xds.example",
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: " Authorization : Bearer a:b , x-tenant:t1,",
    });
    expect(settings).toMatchObject({
      CONFIG_TYPE: "GRPC_XDS_SOTW",
      FORCE_START_WITHOUT_INITIAL_CONFIG: true,
      RATELIMIT_ADMIN_TOKEN: "admin-token",
      CONFIG_GRPC_XDS_NODE_ID: "node-7",
      CONFIG_GRPC_XDS_NODE_METADATA: [
        ["zone", "eu"],
        ["team", "a=b"],
      ],
      CONFIG_GRPC_XDS_SERVER_URL: "xds.internal:9000",
      CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: 500,
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: 1_000,
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: 120_000,
      XDS_CLIENT_BACKOFF_RANDOM_FACTOR: 0.2,
      XDS_CLIENT_BACKOFF_JITTER: false,
      XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: 1_048_576,
      CONFIG_GRPC_XDS_SERVER_USE_TLS: true,
      CONFIG_GRPC_XDS_SERVER_TLS_CACERT: "/ca.pem",
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: "/cert.pem",
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "/key.pem",
      CONFIG_GRPC_XDS_SERVER_TLS_SAN: "xds.example",
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: [
        ["Authorization", "Bearer a:b"],
        ["x-tenant", "t1"],
      ],
    });
  });

  it.each(["control-plane.internal:18000", "10.0.0.7:443", "[::1]:18000", "dns:///xds.example.com:18000"])(
    "takes %s as the server address",
    (address) => {
      expect(gatewaySettings({ CONFIG_GRPC_XDS_SERVER_URL: address }).CONFIG_GRPC_XDS_SERVER_URL).toBe(address);
    },
  );

  it.each<[string, Record<string, string>, string]>([
    [
      "xDS without RATELIMIT_ADMIN_TOKEN",
      { CONFIG_TYPE: "GRPC_XDS_SOTW" },
      "RATELIMIT_ADMIN_TOKEN: is required when CONFIG_TYPE is GRPC_XDS_SOTW (snapshots are stored with it)",
    ],
    [
      "xDS with an empty RATELIMIT_ADMIN_TOKEN",
      { CONFIG_TYPE: "GRPC_XDS_SOTW", RATELIMIT_ADMIN_TOKEN: "" },
      "RATELIMIT_ADMIN_TOKEN: is required when CONFIG_TYPE is GRPC_XDS_SOTW (snapshots are stored with it)",
    ],
    [
      "a server address without a port",
      { CONFIG_GRPC_XDS_SERVER_URL: "control-plane" },
      'CONFIG_GRPC_XDS_SERVER_URL: expected host:port, e.g. "localhost:18000"',
    ],
    [
      "a server address that is not one",
      { CONFIG_GRPC_XDS_SERVER_URL: "not a url" },
      'CONFIG_GRPC_XDS_SERVER_URL: expected host:port, e.g. "localhost:18000"',
    ],
    [
      "an unknown CONFIG_TYPE",
      { CONFIG_TYPE: "XDS" },
      'CONFIG_TYPE: Invalid option: expected one of "FILE"|"GRPC_XDS_SOTW"',
    ],
    [
      "a client certificate without its key",
      { CONFIG_GRPC_XDS_SERVER_USE_TLS: "true", CONFIG_GRPC_XDS_CLIENT_TLS_CERT: "/cert.pem" },
      "CONFIG_GRPC_XDS_CLIENT_TLS_CERT: CONFIG_GRPC_XDS_CLIENT_TLS_CERT and CONFIG_GRPC_XDS_CLIENT_TLS_KEY go together",
    ],
    [
      "a client key without its certificate",
      { CONFIG_GRPC_XDS_SERVER_USE_TLS: "true", CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "/key.pem" },
      "CONFIG_GRPC_XDS_CLIENT_TLS_CERT: CONFIG_GRPC_XDS_CLIENT_TLS_CERT and CONFIG_GRPC_XDS_CLIENT_TLS_KEY go together",
    ],
    [
      "TLS files without CONFIG_GRPC_XDS_SERVER_USE_TLS",
      {
        CONFIG_GRPC_XDS_SERVER_TLS_CACERT: "/ca.pem",
        CONFIG_GRPC_XDS_CLIENT_TLS_CERT: "/cert.pem",
        CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "/key.pem",
        CONFIG_GRPC_XDS_SERVER_TLS_SAN: "x",
      },
      "CONFIG_GRPC_XDS_SERVER_TLS_CACERT: needs CONFIG_GRPC_XDS_SERVER_USE_TLS=true; " +
        "CONFIG_GRPC_XDS_CLIENT_TLS_CERT: needs CONFIG_GRPC_XDS_SERVER_USE_TLS=true; " +
        "CONFIG_GRPC_XDS_SERVER_TLS_SAN: needs CONFIG_GRPC_XDS_SERVER_USE_TLS=true",
    ],
    [
      "an additional header without a colon",
      { CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: "a:b,nocolon" },
      HEADERS_PROBLEM,
    ],
    ["an additional header without a name", { CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: ":value" }, HEADERS_PROBLEM],
    [
      "an additional header whose name has a space",
      { CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: "bad key:v" },
      `CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: header 1: ${NAME_PROBLEM}`,
    ],
    [
      "an additional header whose name ends in -bin (a binary value)",
      { CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: "a:b,x-bin:abc" },
      `CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: header 2: ${NAME_PROBLEM}`,
    ],
    [
      "an additional header whose value is not printable ASCII, without the value",
      { CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: "a:b, x-token:Bearer välue" },
      "CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: header 2: its value may have only printable ASCII characters",
    ],
    [
      "node metadata without an equals sign",
      { CONFIG_GRPC_XDS_NODE_METADATA: "zone" },
      "CONFIG_GRPC_XDS_NODE_METADATA: expected CONFIG_GRPC_XDS_NODE_METADATA as name=value pairs separated by commas",
    ],
    [
      "a backoff interval that is not a duration",
      { XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "ten" },
      'XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: expected a duration such as "10s", "500ms" or "1m"',
    ],
    [
      "a random factor above 1",
      { XDS_CLIENT_BACKOFF_RANDOM_FACTOR: "2" },
      "XDS_CLIENT_BACKOFF_RANDOM_FACTOR: Too big: expected number to be <=1",
    ],
  ])("refuses %s", (_label, env, problems) => {
    expect(() => gatewaySettings(env)).toThrow(new Error(`invalid gateway settings: ${problems}`));
  });
});
