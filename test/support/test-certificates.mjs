// Test CAs and certificates, made with the openssl CLI in a directory the caller owns.
// @ts-check
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { requireBinary } from "./system-programs.mjs";

/** @param {string} dir @param {string[]} args */
function openssl(dir, args) {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

/**
 * A new P-256 key `<name>.key` and what `openssl req` with `options` makes of it: a request or a self-signed certificate.
 * @param {string} dir @param {string} name @param {string} out @param {string} commonName @param {string[]} options
 */
function newKey(dir, name, out, commonName, options) {
  const key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", `${name}.key`];
  openssl(dir, ["req", ...options, ...key, "-out", out, "-subj", `/CN=${commonName}`]);
}

/**
 * A self-signed P-256 CA in `dir` (`<name>.key`, `<name>.pem`), valid two days.
 * @param {string} dir @param {string} name @param {string} [commonName]
 */
export function makeCa(dir, name, commonName = name) {
  requireBinary("openssl");
  newKey(dir, name, `${name}.pem`, commonName, ["-x509", "-days", "2"]);
}

/**
 * A P-256 certificate in `dir` (`<name>.key`, `<name>.pem`) signed by the CA `ca`, with the given openssl extensions.
 * @param {string} dir @param {string} name @param {string} ca @param {string} extensions @param {string} [commonName]
 */
export function makeLeaf(dir, name, ca, extensions, commonName = name) {
  requireBinary("openssl");
  writeFileSync(path.join(dir, `${name}.ext`), extensions);
  newKey(dir, name, `${name}.csr`, commonName, []);
  const signer = ["-CA", `${ca}.pem`, "-CAkey", `${ca}.key`, "-CAcreateserial", "-days", "2"];
  openssl(dir, ["x509", "-req", "-in", `${name}.csr`, ...signer, "-out", `${name}.pem`, "-extfile", `${name}.ext`]);
}

/**
 * A CA and a server certificate it signed (for 127.0.0.1 and localhost), made with the openssl CLI in `dir`.
 * @param {string} dir
 * @returns {{ ca: string, cert: string, key: string }}
 */
export function makeServerCertificate(dir) {
  makeCa(dir, "ca", "test store CA");
  makeLeaf(
    dir,
    "server",
    "ca",
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
    "localhost",
  );
  return { ca: path.join(dir, "ca.pem"), cert: path.join(dir, "server.pem"), key: path.join(dir, "server.key") };
}
