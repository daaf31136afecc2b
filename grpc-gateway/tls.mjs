// Server credentials of the gateway: plain, TLS, or mutual TLS, with the PEM files watched and reloaded when
// they change (a broken or mismatched update is logged and the previous files stay in use).
import grpc from "@grpc/grpc-js";
import { readFileSync, unwatchFile, watchFile } from "node:fs";
import { createSecureContext } from "node:tls";

const WATCH_INTERVAL_MS = 500;

/** @typedef {(level: string, message: string, fields?: object) => void} Log */

/**
 * Reads the files and checks that they make a usable TLS context (the key matches the certificate).
 * @param {{ cert: string, key: string, ca?: string }} paths
 */
function readPemFiles(paths) {
  const files = {
    cert: readFileSync(paths.cert),
    key: readFileSync(paths.key),
    ca: paths.ca === undefined ? undefined : readFileSync(paths.ca),
  };
  createSecureContext(files);
  return files;
}

/**
 * A grpc-js CertificateProvider over watched files: it gives the server its certificate and key, and the
 * client CA when mutual TLS is on, again whenever one of the files changes.
 * @implements {grpc.experimental.CertificateProvider}
 */
class WatchedPemFiles {
  /** @param {{ cert: string, key: string, ca?: string }} paths @param {Log} log */
  constructor(paths, log) {
    this.paths = paths;
    this.log = log;
    // Read once up front so that a wrong path fails the start, not the first handshake.
    this.files = readPemFiles(paths);
    /** @type {Set<grpc.experimental.IdentityCertificateUpdateListener>} */
    this.identityListeners = new Set();
    /** @type {Set<grpc.experimental.CaCertificateUpdateListener>} */
    this.caListeners = new Set();
    this.watching = false;
    this.reload = this.reload.bind(this);
  }

  reload() {
    let files;
    try {
      files = readPemFiles(this.paths);
    } catch (error) {
      this.log("error", "grpc-gateway: TLS files changed but cannot be used; keeping the previous ones", {
        error: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    /** @param {Buffer | undefined} a @param {Buffer | undefined} b */
    const same = (a, b) => (a && b ? a.equals(b) : a === b);
    if (same(files.cert, this.files.cert) && same(files.key, this.files.key) && same(files.ca, this.files.ca)) return;
    this.files = files;
    this.log("info", "grpc-gateway: TLS files reloaded");
    for (const listener of this.identityListeners) listener(this.identity());
    for (const listener of this.caListeners) listener(this.ca());
  }

  identity() {
    return { certificate: this.files.cert, privateKey: this.files.key };
  }

  ca() {
    return this.files.ca ? { caCertificate: this.files.ca } : null;
  }

  updateWatching() {
    const wanted = this.identityListeners.size + this.caListeners.size > 0;
    if (wanted === this.watching) return;
    this.watching = wanted;
    for (const path of [this.paths.cert, this.paths.key, this.paths.ca]) {
      if (path === undefined) continue;
      if (wanted) watchFile(path, { interval: WATCH_INTERVAL_MS, persistent: false }, this.reload);
      else unwatchFile(path, this.reload);
    }
  }

  /** @param {grpc.experimental.IdentityCertificateUpdateListener} listener */
  addIdentityCertificateListener(listener) {
    this.identityListeners.add(listener);
    this.updateWatching();
    process.nextTick(listener, this.identity());
  }

  /** @param {grpc.experimental.IdentityCertificateUpdateListener} listener */
  removeIdentityCertificateListener(listener) {
    this.identityListeners.delete(listener);
    this.updateWatching();
  }

  /** @param {grpc.experimental.CaCertificateUpdateListener} listener */
  addCaCertificateListener(listener) {
    this.caListeners.add(listener);
    this.updateWatching();
    process.nextTick(listener, this.ca());
  }

  /** @param {grpc.experimental.CaCertificateUpdateListener} listener */
  removeCaCertificateListener(listener) {
    this.caListeners.delete(listener);
    this.updateWatching();
  }
}

/**
 * @param {import("./settings.mjs").GatewaySettings} settings
 * @param {Log} log
 * @returns {grpc.ServerCredentials}
 */
export function serverCredentials(settings, log) {
  if (!settings.GRPC_SERVER_USE_TLS) return grpc.ServerCredentials.createInsecure();
  const mutual = settings.GRPC_CLIENT_TLS_CACERT !== undefined;
  // The settings require the certificate and the key with TLS on.
  const cert = /** @type {string} */ (settings.GRPC_SERVER_TLS_CERT);
  const key = /** @type {string} */ (settings.GRPC_SERVER_TLS_KEY);
  const files = new WatchedPemFiles({ cert, key, ca: settings.GRPC_CLIENT_TLS_CACERT }, log);
  // One provider plays both roles (grpc-js 1.14 takes the identity provider first, whatever its typings say).
  return grpc.experimental.createCertificateProviderServerCredentials(files, mutual ? files : null, mutual);
}

/**
 * With GRPC_CLIENT_TLS_SAN set, the reason a call's client certificate is refused, else undefined.
 * @param {grpc.ServerUnaryCall<unknown, unknown>} call
 * @param {string | undefined} san
 */
export function clientSanProblem(call, san) {
  if (!san) return undefined;
  const altNames = call.getAuthContext()?.sslPeerCertificate?.subjectaltname ?? "";
  const dnsNames = altNames
    .split(", ")
    .filter((name) => name.startsWith("DNS:"))
    .map((name) => name.slice(4));
  return dnsNames.includes(san) ? undefined : `client certificate does not name ${san}`;
}
