// The gateway's PEM files checked at start (checkTlsFiles, plain Node): a missing, unreadable or mismatched file is
// refused naming its variable, never its path or content; files of a TLS that is off are not read.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkTlsFiles, gatewaySettings } from "../../grpc-gateway/settings.mjs";
import { makeCertificates, type Certificates } from "../support/grpc-gateway";

let certs: Certificates;
let dir: string;
let notPem: string;
let missing: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "gateway-tls-files-"));
  certs = makeCertificates(dir);
  notPem = path.join(dir, "secret-not-pem.txt");
  writeFileSync(notPem, "not a certificate");
  missing = path.join(dir, "secret-missing.pem");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The message checkTlsFiles refuses these settings with, checked to name neither a path nor a file's content. */
function refusal(env: Record<string, string>): string {
  try {
    checkTlsFiles(gatewaySettings(env));
  } catch (error) {
    const message = (error as Error).message;
    expect(message).not.toMatch(/secret|gateway-tls-files|BEGIN|not a certificate/);
    return message;
  }
  throw new Error("accepted");
}

describe("checkTlsFiles", () => {
  const serverTls = () => ({
    GRPC_SERVER_USE_TLS: "true",
    GRPC_SERVER_TLS_CERT: certs.serverCert,
    GRPC_SERVER_TLS_KEY: certs.serverKey,
    GRPC_CLIENT_TLS_CACERT: certs.caPem,
  });
  const xdsTls = () => ({
    CONFIG_GRPC_XDS_SERVER_USE_TLS: "true",
    CONFIG_GRPC_XDS_SERVER_TLS_CACERT: certs.caPem,
    CONFIG_GRPC_XDS_CLIENT_TLS_CERT: certs.clientCert,
    CONFIG_GRPC_XDS_CLIENT_TLS_KEY: certs.clientKey,
  });

  it("takes usable files, and reads none while TLS is off", () => {
    expect(() => checkTlsFiles(gatewaySettings({ ...serverTls(), ...xdsTls() }))).not.toThrow();
    expect(() => checkTlsFiles(gatewaySettings({ GRPC_SERVER_TLS_CERT: missing }))).not.toThrow();
  });

  it.each<[string, () => Record<string, string>, string]>([
    [
      "a missing xDS CA file",
      () => ({ ...xdsTls(), CONFIG_GRPC_XDS_SERVER_TLS_CACERT: missing }),
      "CONFIG_GRPC_XDS_SERVER_TLS_CACERT: cannot read the file (ENOENT)",
    ],
    [
      "a directory as the server certificate",
      () => ({ ...serverTls(), GRPC_SERVER_TLS_CERT: dir }),
      "GRPC_SERVER_TLS_CERT: cannot read the file (EISDIR)",
    ],
    [
      "a server certificate that is not PEM (the key then left unmatched)",
      () => ({ ...serverTls(), GRPC_SERVER_TLS_CERT: notPem }),
      "GRPC_SERVER_TLS_CERT: holds no PEM certificate",
    ],
    [
      "a certificate given as the key",
      () => ({ ...serverTls(), GRPC_SERVER_TLS_KEY: certs.serverCert }),
      "GRPC_SERVER_TLS_KEY: holds no unencrypted PEM private key",
    ],
    [
      "another certificate's key",
      () => ({ ...serverTls(), GRPC_SERVER_TLS_KEY: certs.clientKey }),
      "GRPC_SERVER_TLS_KEY: is not the key of the certificate given with it",
    ],
    [
      "a client CA and an xDS client key that do not serve (both named)",
      () => ({ ...serverTls(), ...xdsTls(), GRPC_CLIENT_TLS_CACERT: notPem, CONFIG_GRPC_XDS_CLIENT_TLS_KEY: missing }),
      "GRPC_CLIENT_TLS_CACERT: holds no PEM certificate; CONFIG_GRPC_XDS_CLIENT_TLS_KEY: cannot read the file (ENOENT)",
    ],
  ])("refuses %s, naming the variable", (_label, env, problems) => {
    expect(refusal(env())).toBe(`invalid gateway settings: ${problems}`);
  });
});
