// The gateway started with settings it cannot use: it exits 1 with one JSON error line naming the variable, never its
// value, instead of a grpc-js or Node stack trace (an xDS header value may be a bearer token).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runGatewayAlone } from "../support/grpc-gateway";

const dir = mkdtempSync(path.join(tmpdir(), "gateway-refused-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (env: Record<string, string>) => runGatewayAlone(env);

/** Exit 1, nothing on stdout, and stderr exactly one error line with this message. */
async function expectRefused(env: Record<string, string>, message: string) {
  const result = await run(env);
  expect(result.code).toBe(1);
  expect(result.stdout).toBe("");
  const [line, ...rest] = result.stderr.trimEnd().split("\n");
  const { "@timestamp": _, ...entry } = JSON.parse(line);
  expect({ entry, rest }).toEqual({ entry: { level: "error", "@message": message }, rest: [] });
}

describe("grpc-gateway with settings it cannot use", () => {
  it("refuses an xDS header value gRPC would not send, without printing it", async () => {
    await expectRefused(
      {
        CONFIG_TYPE: "GRPC_XDS_SOTW",
        RATELIMIT_ADMIN_TOKEN: "t",
        CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: "authorization:Bearer sécret-token",
      },
      "invalid gateway settings: CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: header 1: its value may have only " +
        "printable ASCII characters",
    );
  });

  it("refuses a server certificate file that holds no PEM, naming GRPC_SERVER_TLS_CERT", async () => {
    const cert = path.join(dir, "cert.pem");
    const key = path.join(dir, "key.pem");
    writeFileSync(cert, "not a certificate");
    writeFileSync(key, "not a key");
    await expectRefused(
      { GRPC_SERVER_USE_TLS: "true", GRPC_SERVER_TLS_CERT: cert, GRPC_SERVER_TLS_KEY: key, GRPC_PORT: "0" },
      "invalid gateway settings: GRPC_SERVER_TLS_CERT: holds no PEM certificate; GRPC_SERVER_TLS_KEY: holds no " +
        "unencrypted PEM private key",
    );
  });
});
