// An ACME (RFC 8555) client for the certificate job: account, order, HTTP-01 challenges answered by this Worker,
// finalize with a P-256 CSR, download of the chain, and the renewal information of a certificate (RFC 9773). JWS
// through jose; the transport (fetch), the waits and the challenge store are passed in, so that tests and the job
// decide where they go. Whatever the CA answers is read up to a bound.
import { calculateJwkThumbprint, FlattenedSign, importJWK, type JWK } from "jose";
import { toBase64Url } from "../../shared/bytes";
import { readAnswerText } from "../../shared/http/bounded-fetch";
import { isHttpUrl, MAX_RENEWAL_INFO_BYTES } from "./renewal";
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

/** A RenewalInfo answer as the CA sent it (its body is read by ./renewal.ts). */
export interface RenewalInfoAnswer {
  body: string;
  retryAfter: string | null;
}

/** The type of an AcmeError that says the CA gave no (whole) answer: it timed out, or could not be reached. */
export const CA_UNREACHABLE = "urn:local:ca-unreachable";

export const isCaUnreachable = (error: unknown) => error instanceof AcmeError && error.type === CA_UNREACHABLE;

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
  /** Present when the CA offers ACME Renewal Information (RFC 9773 §3). */
  renewalInfo?: string;
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
/** The certificate named in `replaces` was replaced already (RFC 9773 §5): the order is made again without it. */
const ALREADY_REPLACED = "urn:ietf:params:acme:error:alreadyReplaced";
/** HTTP Conflict: what pebble 2.6 (as `malformed`) answers for a certificate replaced already. */
const CONFLICT = 409;
const NONCE_RETRIES = 5;
/** Polls of a pending authorization or order before giving up (each waits Retry-After, 1 to 10 s). */
const MAX_POLLS = 30;
/** Directory, account, order and authorization objects of one domain are a few kilobytes. */
const MAX_JSON_BYTES = 65_536;
const MAX_CHAIN_BYTES = 262_144;

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
  /** Loaded once per client (one job run): a failure stands for the run rather than being asked again per use. */
  private directoryLoad?: Promise<Directory>;
  private account?: AcmeAccountKey;
  private nonce?: string;
  private signingKey?: CryptoKey | Uint8Array;

  constructor(
    private readonly directoryUrl: string,
    private readonly deps: AcmeDependencies,
  ) {}

  private directory(): Promise<Directory> {
    return (this.directoryLoad ??= this.loadDirectory());
  }

  private async loadDirectory(): Promise<Directory> {
    const response = await this.deps.fetch(this.directoryUrl, { headers: { Accept: "application/json" } });
    if (!response.ok) {
      await response.body?.cancel();
      throw new AcmeError(`ACME directory ${this.directoryUrl} answered HTTP ${response.status}`);
    }
    const body = await readJson<Partial<Record<keyof Directory, unknown>>>(
      response,
      `ACME directory ${this.directoryUrl}`,
    );
    if (!isHttpUrl(body.newNonce) || !isHttpUrl(body.newAccount) || !isHttpUrl(body.newOrder))
      throw new AcmeError(`ACME directory ${this.directoryUrl} is incomplete`);
    return {
      newNonce: body.newNonce,
      newAccount: body.newAccount,
      newOrder: body.newOrder,
      ...(isHttpUrl(body.renewalInfo) ? { renewalInfo: body.renewalInfo } : {}),
    };
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
    const account = this.account;
    if (!account) throw new AcmeError("no ACME account: ensureAccount comes first");
    this.signingKey ??= await importJWK(account.privateJwk as JWK, "ES256");
    const body = payload === undefined ? new Uint8Array(0) : new TextEncoder().encode(JSON.stringify(payload));
    for (let attempt = 1; ; attempt++) {
      const header = {
        alg: "ES256",
        nonce: await this.freshNonce(),
        url,
        ...(account.accountUrl ? { kid: account.accountUrl } : { jwk: publicJwkOf(account.privateJwk) }),
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

  /** Registers the account (or finds it again by its key) and signs with it from now on; returns its URL. */
  async ensureAccount(account: AcmeAccountKey, email: string | undefined): Promise<string> {
    this.account = account;
    this.signingKey = undefined;
    if (account.accountUrl) return account.accountUrl;
    const response = await this.post((await this.directory()).newAccount, {
      termsOfServiceAgreed: true,
      ...(email ? { contact: [`mailto:${email}`] } : {}),
    });
    await response.body?.cancel();
    const location = response.headers.get("Location");
    if (!location) throw new AcmeError("the CA created the account without telling its URL");
    account.accountUrl = location;
    return location;
  }

  /**
   * The CA's RenewalInfo for a certificate ID (RFC 9773 §4.1, an unauthenticated GET), or undefined when the CA
   * offers none. Throws AcmeError when the CA answers anything but 200 or more than a RenewalInfo's worth of bytes.
   */
  async renewalInfo(certificateId: string): Promise<RenewalInfoAnswer | undefined> {
    const base = (await this.directory()).renewalInfo;
    if (!base) return undefined;
    const url = `${base.replace(/\/+$/, "")}/${certificateId}`;
    const response = await this.deps.fetch(url, { headers: { Accept: "application/json" } });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new AcmeError(`renewal information ${url} answered HTTP ${response.status}`, undefined, response.status);
    }
    return {
      body: await readText(response, MAX_RENEWAL_INFO_BYTES, `renewal information ${url}`),
      retryAfter: response.headers.get("Retry-After"),
    };
  }

  private async poll<T extends { status: string }>(url: string, done: (value: T) => boolean): Promise<T> {
    for (let poll = 0; ; poll++) {
      const response = await this.post(url, undefined);
      const value = await readJson<T>(response, url);
      if (done(value) || poll >= MAX_POLLS) return value;
      const retryAfter = Number(response.headers.get("Retry-After"));
      await this.deps.sleep(
        Math.min(Math.max(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 1000, 1000), 10_000),
      );
    }
  }

  /**
   * Orders a certificate for one domain with HTTP-01 and returns the chain and its new private key. `replaces` names
   * the certificate it renews (its ARI certificate ID; only for a CA that offers renewal information).
   */
  async obtainCertificate(domainName: string, replaces?: string): Promise<IssuedCertificate> {
    const { order, orderUrl } = await this.newOrder(domainName, replaces);
    await this.authorize(order, domainName);
    return this.finalize(order, orderUrl, domainName);
  }

  /** Creates the order; a CA that refuses `replaces` because it was renewed already is asked again without it. */
  private async newOrder(domainName: string, replaces?: string): Promise<{ order: Order; orderUrl: string }> {
    const directory = await this.directory();
    const identifiers = [{ type: "dns", value: domainName }];
    let created: Response;
    try {
      created = await this.post(directory.newOrder, replaces ? { identifiers, replaces } : { identifiers });
    } catch (error) {
      const replacedAlready =
        error instanceof AcmeError && (error.type === ALREADY_REPLACED || error.status === CONFLICT);
      if (!replaces || !replacedAlready) throw error;
      created = await this.post(directory.newOrder, { identifiers });
    }
    const orderUrl = created.headers.get("Location");
    const order = await readJson<Order>(created, directory.newOrder);
    if (!orderUrl) throw new AcmeError("the CA created the order without telling its URL");
    return { order, orderUrl };
  }

  /** Answers each pending authorization's HTTP-01 challenge; the challenges are removed again however it ends. */
  private async authorize(order: Order, domainName: string): Promise<void> {
    // post() refused to create the order without the account.
    const thumbprint = await calculateJwkThumbprint(publicJwkOf(this.account!.privateJwk), "sha256");
    const tokens: string[] = [];
    try {
      for (const authorizationUrl of order.authorizations) {
        const authorization = await readJson<Authorization>(
          await this.post(authorizationUrl, undefined),
          authorizationUrl,
        );
        if (authorization.status === "valid") continue;
        const challenge = authorization.challenges.find((candidate) => candidate.type === "http-01");
        if (!challenge) throw new AcmeError(`the CA offers no http-01 challenge for ${authorization.identifier.value}`);
        await this.deps.challenges.put({
          token: challenge.token,
          keyAuthorization: `${challenge.token}.${thumbprint}`,
          domainName,
        });
        tokens.push(challenge.token);
        await (await this.post(challenge.url, {})).body?.cancel();
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
  }

  /** Sends the CSR of a new key, waits for the certificate and downloads its chain. */
  private async finalize(authorized: Order, orderUrl: string, domainName: string): Promise<IssuedCertificate> {
    const keys = await generateCertificateKey();
    const csr = await buildCsr(keys, [domainName]);
    let order = await readJson<Order>(
      await this.post(authorized.finalize, { csr: toBase64Url(csr) }),
      authorized.finalize,
    );
    if (order.status !== "valid")
      order = await this.poll<Order>(orderUrl, (value) => value.status !== "processing" && value.status !== "ready");
    if (order.status !== "valid" || !order.certificate) {
      throw new AcmeError(
        `order for ${domainName} is ${order.status}: ${order.error?.detail ?? "no certificate issued"}`,
      );
    }
    const chain = await readText(
      await this.post(order.certificate, undefined, "application/pem-certificate-chain"),
      MAX_CHAIN_BYTES,
      order.certificate,
    );
    return { certificatePem: chain, privateKeyPem: await privateKeyPem(keys.privateKey) };
  }
}

/** The body as UTF-8 text, refused (unread past the bound) when longer than `limit` bytes. */
function readText(response: Response, limit: number, what: string): Promise<string> {
  return readAnswerText(response, limit, {
    refused: (why) =>
      new AcmeError(`${what}: the answer is ${why === "too large" ? `longer than ${limit} bytes` : "not valid UTF-8"}`),
    // The request's signal (ACME_REQUEST_TIMEOUT) ends a body that stalls, as it ends one that never starts.
    unanswered: (failure) => {
      const cause = failure.timedOut
        ? "the CA did not send its whole answer within ACME_REQUEST_TIMEOUT"
        : `the answer was cut off: ${failure.detail}`;
      return new AcmeError(`${what}: ${cause}`, CA_UNREACHABLE);
    },
  });
}

async function readJson<T>(response: Response, what: string): Promise<T> {
  const text = await readText(response, MAX_JSON_BYTES, what);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new AcmeError(`${what}: the answer is not JSON`);
  }
}

async function readProblem(response: Response): Promise<{ type?: string; detail?: string }> {
  let text: string;
  try {
    text = await readText(response, MAX_JSON_BYTES, "problem document");
  } catch {
    return { detail: `HTTP ${response.status} with an overlong body` };
  }
  try {
    const body = JSON.parse(text) as { type?: unknown; detail?: unknown };
    const field = (value: unknown) => (typeof value === "string" ? value.slice(0, 500) : undefined);
    return { type: field(body?.type), detail: field(body?.detail) };
  } catch {
    return { detail: `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ""}` };
  }
}
