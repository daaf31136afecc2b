// X.509 for the certificate jobs, on WebCrypto and the DER helpers: read certificates (names, validity, issuer),
// build PKCS#10 requests for ACME and the self-signed fallback certificate, and keep keys as PKCS#8 PEM.
import { fromBase64, toBase64, toHex } from "../../shared/bytes";
import * as der from "./der";

const OID = {
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  organizationalUnit: "2.5.4.11",
  country: "2.5.4.6",
  subjectAltName: "2.5.29.17",
  authorityKeyIdentifier: "2.5.29.35",
  basicConstraints: "2.5.29.19",
  extensionRequest: "1.2.840.113549.1.9.14",
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  ecPublicKey: "1.2.840.10045.2.1",
  rsaEncryption: "1.2.840.113549.1.1.1",
  p256: "1.2.840.10045.3.1.7",
  p384: "1.2.840.10045.3.1.34",
} as const;

const ATTRIBUTE_NAMES: Record<string, string> = {
  [OID.commonName]: "CN",
  [OID.organization]: "O",
  [OID.organizationalUnit]: "OU",
  [OID.country]: "C",
};

// ---- PEM ----

export function toPem(label: string, bytes: Uint8Array): string {
  const lines = toBase64(bytes).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/** Every PEM block with this label, decoded, in order. */
export function pemBlocks(text: string, label: string): Uint8Array[] {
  const pattern = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]*?)-----END ${label}-----`, "g");
  return [...text.matchAll(pattern)].map((match) => fromBase64(match[1].replace(/\s+/g, "")));
}

/** The PEM blocks of a text with these labels, re-encoded canonically (drops anything between blocks). */
export const normalisePem = (text: string, label: string) =>
  pemBlocks(text, label)
    .map((block) => toPem(label, block))
    .join("");

// ---- reading certificates ----

export interface CertificateInfo {
  /** DNS names of the subjectAltName extension (lower-cased), else the subject's common name. */
  domainNames: string[];
  issuer: string;
  subject: string;
  serialNumber: string;
  /** The serial number's DER content octets (a leading 0 byte included), as ACME Renewal Information names it. */
  serialBytes: Uint8Array;
  /** The keyIdentifier of the Authority Key Identifier extension, when the certificate has one. */
  authorityKeyIdentifier?: Uint8Array;
  notBefore: Date;
  notAfter: Date;
  /** The SubjectPublicKeyInfo, DER. */
  spki: Uint8Array;
}

function readName(node: der.Node): { text: string; commonName?: string } {
  const parts: string[] = [];
  let commonName: string | undefined;
  for (const rdn of der.children(der.expectTag(node, der.TAG.SEQUENCE, "name"))) {
    for (const attribute of der.children(rdn)) {
      const [type, value] = der.children(attribute);
      const oid = der.readObjectIdentifier(type);
      const text = der.readString(value);
      if (oid === OID.commonName) commonName = text;
      parts.push(`${ATTRIBUTE_NAMES[oid] ?? oid}=${text}`);
    }
  }
  return { text: parts.join(", "), commonName };
}

/** Reads one DER certificate. Throws DerError on anything that is not an X.509 v3 (or v1) certificate. */
export function readCertificate(bytes: Uint8Array): CertificateInfo {
  const certificate = der.expectTag(der.parse(bytes), der.TAG.SEQUENCE, "certificate");
  const tbs = der.expectTag(der.children(certificate)[0], der.TAG.SEQUENCE, "tbsCertificate");
  const fields = der.children(tbs);
  let index = fields[0]?.tag === der.contextTag(0, true) ? 1 : 0;
  const serial = der.expectTag(fields[index++], der.TAG.INTEGER, "serial number");
  index++; // signature algorithm
  const issuer = readName(fields[index++]);
  const validity = der.children(der.expectTag(fields[index++], der.TAG.SEQUENCE, "validity"));
  const subject = readName(fields[index++]);
  const spki = der.expectTag(fields[index++], der.TAG.SEQUENCE, "subjectPublicKeyInfo");
  const names: string[] = [];
  let authorityKeyIdentifier: Uint8Array | undefined;
  for (const field of fields.slice(index)) {
    if (field.tag !== der.contextTag(3, true)) continue;
    for (const extension of der.children(der.children(field)[0])) {
      const parts = der.children(extension);
      const oid = der.readObjectIdentifier(parts[0]);
      // Only the values read here are parsed: other extensions may use what this reader does not support.
      const value = () => der.parse(parts[parts.length - 1].content);
      if (oid === OID.subjectAltName) {
        for (const generalName of der.children(value())) {
          if (generalName.tag === der.contextTag(2, false)) names.push(der.readString(generalName).toLowerCase());
        }
      } else if (oid === OID.authorityKeyIdentifier) {
        // AuthorityKeyIdentifier ::= SEQUENCE { keyIdentifier [0] IMPLICIT OCTET STRING OPTIONAL, ... }
        const keyIdentifier = der
          .children(der.expectTag(value(), der.TAG.SEQUENCE, "authority key identifier"))
          .find((part) => part.tag === der.contextTag(0, false));
        if (keyIdentifier && keyIdentifier.content.length > 0) authorityKeyIdentifier = keyIdentifier.content;
      }
    }
  }
  if (names.length === 0 && subject.commonName) names.push(subject.commonName.toLowerCase());
  return {
    domainNames: [...new Set(names)],
    issuer: issuer.text,
    subject: subject.text,
    serialNumber: toHex(serial.content).replace(/^00(?=.)/, ""),
    serialBytes: serial.content,
    ...(authorityKeyIdentifier ? { authorityKeyIdentifier } : {}),
    notBefore: der.readTime(validity[0]),
    notAfter: der.readTime(validity[1]),
    spki: spki.raw,
  };
}

/** Reads the first certificate of a PEM chain. */
export function readCertificatePem(pem: string): CertificateInfo {
  const [leaf] = pemBlocks(pem, "CERTIFICATE");
  if (!leaf) throw new der.DerError("no CERTIFICATE block");
  return readCertificate(leaf);
}

/**
 * Every certificate of a PEM chain, in order. Throws DerError when it holds no certificate, a block of another kind
 * (application/pem-certificate-chain holds certificates only, RFC 8555 §9.1), or a certificate that cannot be read
 * (stored, HAProxy would refuse it, and with it the whole configuration).
 */
export function readCertificateChain(pem: string): CertificateInfo[] {
  const labels = [...pem.matchAll(/-----BEGIN ([^\r\n]*?)-----/g)].map((match) => match[1]);
  const other = labels.find((label) => label !== "CERTIFICATE");
  if (other !== undefined)
    throw new der.DerError(`the chain holds a ${other.slice(0, 40)} block, not only certificates`);
  if (labels.length === 0) throw new der.DerError("no CERTIFICATE block");
  let blocks: Uint8Array[];
  try {
    blocks = pemBlocks(pem, "CERTIFICATE");
  } catch {
    throw new der.DerError("a CERTIFICATE block of the chain is not base64");
  }
  if (blocks.length !== labels.length)
    throw new der.DerError("a CERTIFICATE block of the chain is cut off or not base64");
  return blocks.map((block, index) => {
    try {
      return readCertificate(block);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new der.DerError(`certificate ${index + 1} of the chain cannot be read: ${why}`);
    }
  });
}

/** True when `pattern` (a certificate name, possibly `*.example.com`) covers the host name. */
export function nameCovers(pattern: string, hostName: string): boolean {
  if (pattern === hostName) return true;
  if (!pattern.startsWith("*.")) return false;
  const dot = hostName.indexOf(".");
  return dot > 0 && hostName.slice(dot + 1) === pattern.slice(2);
}

// ---- keys ----

export type KeyAlgorithm = SubtleCryptoImportKeyAlgorithm;

const P256: SubtleCryptoGenerateKeyAlgorithm = { name: "ECDSA", namedCurve: "P-256" };

/** A fresh P-256 key pair for a certificate (HAProxy serves ECDSA certificates; every public CA issues them). */
export async function generateCertificateKey(): Promise<CryptoKeyPair> {
  return (await crypto.subtle.generateKey(P256, true, ["sign", "verify"])) as CryptoKeyPair;
}

export async function privateKeyPem(key: CryptoKey): Promise<string> {
  return toPem("PRIVATE KEY", new Uint8Array((await crypto.subtle.exportKey("pkcs8", key)) as ArrayBuffer));
}

async function spkiOf(key: CryptoKey): Promise<Uint8Array> {
  return new Uint8Array((await crypto.subtle.exportKey("spki", key)) as ArrayBuffer);
}

/** The WebCrypto algorithm of a PKCS#8 key (EC P-256/P-384 or RSA), read from its AlgorithmIdentifier. */
function pkcs8Algorithm(pkcs8: Uint8Array): KeyAlgorithm {
  const [, algorithm] = der.children(der.parse(pkcs8));
  const [oid, parameters] = der.children(algorithm);
  const type = der.readObjectIdentifier(oid);
  if (type === OID.rsaEncryption) return { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  if (type === OID.ecPublicKey && parameters?.tag === der.TAG.OID) {
    const curve = der.readObjectIdentifier(parameters);
    if (curve === OID.p256) return { name: "ECDSA", namedCurve: "P-256" };
    if (curve === OID.p384) return { name: "ECDSA", namedCurve: "P-384" };
  }
  throw new der.DerError("the private key must be RSA or EC P-256/P-384");
}

/**
 * Checks that a PKCS#8 PEM private key belongs to the certificate's public key; returns the problem or undefined.
 */
export async function keyMismatch(privateKeyText: string, info: CertificateInfo): Promise<string | undefined> {
  const [pkcs8] = pemBlocks(privateKeyText, "PRIVATE KEY");
  if (!pkcs8) return "the private key must be a PKCS#8 PEM block (BEGIN PRIVATE KEY)";
  let algorithm: KeyAlgorithm;
  let privateJwk: JsonWebKey;
  let publicJwk: JsonWebKey;
  try {
    algorithm = pkcs8Algorithm(pkcs8);
    const privateKey = await crypto.subtle.importKey("pkcs8", pkcs8, algorithm, true, ["sign"]);
    privateJwk = (await crypto.subtle.exportKey("jwk", privateKey)) as JsonWebKey;
    const publicKey = await crypto.subtle.importKey("spki", info.spki, algorithm, true, ["verify"]);
    publicJwk = (await crypto.subtle.exportKey("jwk", publicKey)) as JsonWebKey;
  } catch (error) {
    return `the key cannot be read: ${error instanceof Error ? error.message : String(error)}`;
  }
  const same =
    algorithm.name === "ECDSA"
      ? privateJwk.x === publicJwk.x && privateJwk.y === publicJwk.y
      : privateJwk.n === publicJwk.n && privateJwk.e === publicJwk.e;
  return same ? undefined : "the private key does not belong to the certificate";
}

// ---- building CSRs and certificates ----

/** WebCrypto's ECDSA signature (r || s) as the DER Ecdsa-Sig-Value X.509 wants. */
function ecdsaSignatureToDer(raw: Uint8Array): Uint8Array {
  const half = raw.length / 2;
  return der.sequence(der.unsignedInteger(raw.subarray(0, half)), der.unsignedInteger(raw.subarray(half)));
}

async function signEcdsa(key: CryptoKey, data: Uint8Array): Promise<Uint8Array> {
  const raw = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key, data));
  return ecdsaSignatureToDer(raw);
}

const ecdsaWithSha256 = () => der.sequence(der.objectIdentifier(OID.ecdsaWithSha256));

const commonNameOnly = (commonName: string) =>
  der.sequence(der.set(der.sequence(der.objectIdentifier(OID.commonName), der.utf8String(commonName))));

const subjectAltNames = (domainNames: string[]) =>
  der.sequence(
    der.objectIdentifier(OID.subjectAltName),
    der.octetString(
      der.sequence(...domainNames.map((name) => der.tlv(der.contextTag(2, false), new TextEncoder().encode(name)))),
    ),
  );

/** A PKCS#10 certificate request (DER) for the domain names, signed with the key pair (P-256). */
export async function buildCsr(keys: CryptoKeyPair, domainNames: string[]): Promise<Uint8Array> {
  const extensionRequest = der.sequence(
    der.objectIdentifier(OID.extensionRequest),
    der.set(der.sequence(subjectAltNames(domainNames))),
  );
  const info = der.sequence(
    der.smallInteger(0),
    commonNameOnly(domainNames[0]),
    await spkiOf(keys.publicKey),
    der.tlv(der.contextTag(0, true), extensionRequest),
  );
  return der.sequence(info, ecdsaWithSha256(), der.bitString(await signEcdsa(keys.privateKey, info)));
}

const authorityKeyIdentifier = (keyIdentifier: Uint8Array) =>
  der.sequence(
    der.objectIdentifier(OID.authorityKeyIdentifier),
    der.octetString(der.sequence(der.tlv(der.contextTag(0, false), keyIdentifier))),
  );

/**
 * A self-signed certificate: HAProxy's https frontend needs a default certificate even when no domain has one, and
 * serves it to clients asking for a name no certificate covers. `authorityKeyIdentifier` names an issuer key (a
 * stand-in CA's certificates then carry what ACME Renewal Information identifies them by).
 */
export async function selfSignedCertificate(input: {
  commonName: string;
  notBefore: Date;
  notAfter: Date;
  authorityKeyIdentifier?: Uint8Array;
}) {
  const keys = await generateCertificateKey();
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] &= 0x7f;
  const name = commonNameOnly(input.commonName);
  const tbs = der.sequence(
    der.explicit(0, der.smallInteger(2)),
    der.unsignedInteger(serial),
    ecdsaWithSha256(),
    name,
    der.sequence(der.time(input.notBefore), der.time(input.notAfter)),
    name,
    await spkiOf(keys.publicKey),
    der.explicit(
      3,
      der.sequence(
        der.sequence(der.objectIdentifier(OID.basicConstraints), der.boolean(true), der.octetString(der.sequence())),
        ...(input.authorityKeyIdentifier ? [authorityKeyIdentifier(input.authorityKeyIdentifier)] : []),
      ),
    ),
  );
  const certificate = der.sequence(tbs, ecdsaWithSha256(), der.bitString(await signEcdsa(keys.privateKey, tbs)));
  return { certificatePem: toPem("CERTIFICATE", certificate), privateKeyPem: await privateKeyPem(keys.privateKey) };
}
