// An ACME (RFC 8555) client for the certificate job: account, order, HTTP-01 challenges answered by this Worker,
// finalize with a P-256 CSR, download of the chain. JWS through jose; the transport (fetch), the waits and the
// challenge store are passed in, so that tests and the job decide where they go.
import { calculateJwkThumbprint, FlattenedSign, importJWK, type JWK } from "jose";
import { toBase64Url } from "../../shared/bytes";
import { buildCsr, generateCertificateKey, privateKeyPem } from "./x509";

export interface ChallengeStore {
  /** Makes GET /.well-known/acme-challenge/{token} answer the key authorization. */
  put(challenge: { token: string; keyAuthorization: string; domainName: string }): Promise<void>;
  remove(tokens: string[]): Promise<void>;
}

export interface AcmeDependencies {
  fetch: (url: string, init?: RequestInit) => Promise<Response>;
  sleep: (ms: number) => Promise<void>;
  challenges: ChallengeStore;
}

export interface AcmeAccountKey {
  privateJwk: JsonWebKey;
  /** Known once the account exists at the CA. */
  accountUrl?: string;
}

export interface IssuedCertificate {
  certificatePem: string;
  privateKeyPem: string;
}

/** A problem document from the CA (RFC 7807), or a protocol failure of ours. */
export class AcmeError extends Error {
  override name = "AcmeError";
  constructor(
    message: string,
    readonly type?: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

interface Directory {
  newNonce: string;
  newAccount: string;
  newOrder: string;
}

interface Order {
  status: string;
  authorizations: string[];
  finalize: string;
  certificate?: string;
  error?: { detail?: string };
}

interface Authorization {
  status: string;
  identifier: { value: string };
  challenges: {
    type: string;
    url: string;
    token: string;
    status: string;
    error?: { detail?: string; type?: string };
  }[];
}

const BAD_NONCE = "urn:ietf:params:acme:error:badNonce";
const NONCE_RETRIES = 5;
/** Polls of a pending authorization or order before giving up (each waits Retry-After, 1 to 10 s). */
const MAX_POLLS = 30;

/** Creates a fresh ES256 account key. */
export async function generateAccountKey(): Promise<JsonWebKey> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  return (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
}

const publicJwkOf = (jwk: JsonWebKey): JWK => ({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y });

export class AcmeClient {
  private directoryCache?: Directory;
  private nonce?: string;
  private signingKey?: CryptoKey | Uint8Array;

  constructor(
    private readonly directoryUrl: string,
    private readonly account: AcmeAccountKey,
    private readonly deps: AcmeDependencies,
  ) {}

  private async directory(): Promise<Directory> {
    if (this.directoryCache) return this.directoryCache;
    const response = await this.deps.fetch(this.directoryUrl, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new AcmeError(`ACME directory ${this.directoryUrl} answered HTTP ${response.status}`);
    const body = (await response.json()) as Partial<Directory>;
    if (!body.newNonce || !body.newAccount || !body.newOrder)
      throw new AcmeError(`ACME directory ${this.directoryUrl} is incomplete`);
    return (this.directoryCache = body as Directory);
  }

  private async freshNonce(): Promise<string> {
    if (this.nonce) {
      const nonce = this.nonce;
      this.nonce = undefined;
      return nonce;
    }
    const response = await this.deps.fetch((await this.directory()).newNonce, { method: "HEAD" });
    const nonce = response.headers.get("Replay-Nonce");
    if (!nonce) throw new AcmeError(`the CA gave no nonce (HTTP ${response.status})`);
    return nonce;
  }

  /** A signed POST (payload undefined = POST-as-GET); retries a rejected nonce with the one the CA sent back. */
  private async post(url: string, payload: unknown, accept = "application/json"): Promise<Response> {
    this.signingKey ??= await importJWK(this.account.privateJwk as JWK, "ES256");
    const body = payload === undefined ? new Uint8Array(0) : new TextEncoder().encode(JSON.stringify(payload));
    for (let attempt = 1; ; attempt++) {
      const header = {
        alg: "ES256",
        nonce: await this.freshNonce(),
        url,
        ...(this.account.accountUrl ? { kid: this.account.accountUrl } : { jwk: publicJwkOf(this.account.privateJwk) }),
      };
      const jws = await new FlattenedSign(body).setProtectedHeader(header).sign(this.signingKey);
      const response = await this.deps.fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/jose+json", Accept: accept },
        body: JSON.stringify(jws),
      });
      this.nonce = response.headers.get("Replay-Nonce") ?? undefined;
      if (response.ok) return response;
      const problem = await readProblem(response);
      if (problem.type === BAD_NONCE && attempt < NONCE_RETRIES) continue;
      throw new AcmeError(`${problem.detail ?? `HTTP ${response.status}`} (${url})`, problem.type, response.status);
    }
  }

  /** Registers the account (or finds it again by its key); returns its URL. */
  async ensureAccount(email: string | undefined): Promise<string> {
    if (this.account.accountUrl) return this.account.accountUrl;
    const response = await this.post((await this.directory()).newAccount, {
      termsOfServiceAgreed: true,
      ...(email ? { contact: [`mailto:${email}`] } : {}),
    });
    const location = response.headers.get("Location");
    if (!location) throw new AcmeError("the CA created the account without telling its URL");
    this.account.accountUrl = location;
    return location;
  }

  private async poll<T extends { status: string }>(url: string, done: (value: T) => boolean): Promise<T> {
    for (let poll = 0; ; poll++) {
      const response = await this.post(url, undefined);
      const value = (await response.json()) as T;
      if (done(value) || poll >= MAX_POLLS) return value;
      const retryAfter = Number(response.headers.get("Retry-After"));
      await this.deps.sleep(
        Math.min(Math.max(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 1000, 1000), 10_000),
      );
    }
  }

  /** Orders a certificate for one domain with HTTP-01 and returns the chain and its new private key. */
  async obtainCertificate(domainName: string): Promise<IssuedCertificate> {
    const directory = await this.directory();
    const created = await this.post(directory.newOrder, { identifiers: [{ type: "dns", value: domainName }] });
    const orderUrl = created.headers.get("Location");
    let order = (await created.json()) as Order;
    if (!orderUrl) throw new AcmeError("the CA created the order without telling its URL");

    const thumbprint = await calculateJwkThumbprint(publicJwkOf(this.account.privateJwk), "sha256");
    const tokens: string[] = [];
    try {
      for (const authorizationUrl of order.authorizations) {
        const authorization = (await (await this.post(authorizationUrl, undefined)).json()) as Authorization;
        if (authorization.status === "valid") continue;
        const challenge = authorization.challenges.find((candidate) => candidate.type === "http-01");
        if (!challenge) throw new AcmeError(`the CA offers no http-01 challenge for ${authorization.identifier.value}`);
        await this.deps.challenges.put({
          token: challenge.token,
          keyAuthorization: `${challenge.token}.${thumbprint}`,
          domainName,
        });
        tokens.push(challenge.token);
        await this.post(challenge.url, {});
        const result = await this.poll<Authorization>(authorizationUrl, (value) => value.status !== "pending");
        if (result.status !== "valid") {
          const failed = result.challenges.find((candidate) => candidate.type === "http-01");
          throw new AcmeError(
            `authorization of ${domainName} is ${result.status}: ${failed?.error?.detail ?? "no detail given"}`,
            failed?.error?.type,
          );
        }
      }
    } finally {
      if (tokens.length) await this.deps.challenges.remove(tokens);
    }

    const keys = await generateCertificateKey();
    const csr = await buildCsr(keys, [domainName]);
    order = (await (await this.post(order.finalize, { csr: toBase64Url(csr) })).json()) as Order;
    if (order.status !== "valid")
      order = await this.poll<Order>(orderUrl, (value) => value.status !== "processing" && value.status !== "ready");
    if (order.status !== "valid" || !order.certificate) {
      throw new AcmeError(
        `order for ${domainName} is ${order.status}: ${order.error?.detail ?? "no certificate issued"}`,
      );
    }
    const chain = await (await this.post(order.certificate, undefined, "application/pem-certificate-chain")).text();
    return { certificatePem: chain, privateKeyPem: await privateKeyPem(keys.privateKey) };
  }
}

async function readProblem(response: Response): Promise<{ type?: string; detail?: string }> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { type?: string; detail?: string };
    return { type: body.type, detail: body.detail };
  } catch {
    return { detail: `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ""}` };
  }
}
