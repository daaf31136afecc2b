// The ACME client's renewal information (RFC 9773) against a scripted CA in plain Node: the directory's renewalInfo,
// the unauthenticated GET of a certificate ID, answers refused by status or size, and `replaces` in a new order
// (made again without it when the CA says the certificate was replaced already).
import { describe, expect, it } from "vitest";
import { AcmeClient, AcmeError, generateAccountKey } from "../../../src/proxy/pki/acme-client";

const DIRECTORY = "https://ca.test/dir";
const ID = "aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE";

type Route = (request: { url: string; method: string; payload?: Record<string, unknown> }) => Response;

/** A CA answering each request with `route`; records what it was asked (the JWS payloads decoded). */
function scriptedCa(directory: Record<string, unknown>, route: Route = () => new Response(null, { status: 404 })) {
  const requests: { method: string; url: string; payload?: Record<string, unknown> }[] = [];
  const fetch = async (url: string, init?: RequestInit) => {
    const method = init?.method ?? "GET";
    let payload: Record<string, unknown> | undefined;
    if (typeof init?.body === "string") {
      const encoded = (JSON.parse(init.body) as { payload: string }).payload;
      if (encoded) payload = JSON.parse(Buffer.from(encoded, "base64url").toString("utf8"));
    }
    requests.push(payload ? { method, url, payload } : { method, url });
    if (url === DIRECTORY) return Response.json(directory);
    return route({ url, method, payload });
  };
  const client = new AcmeClient(DIRECTORY, {
    fetch,
    sleep: async () => {},
    challenges: { put: async () => {}, remove: async () => {} },
  });
  return { client, requests };
}

const acmeDirectory = {
  newNonce: "https://ca.test/nonce",
  newAccount: "https://ca.test/account",
  newOrder: "https://ca.test/order",
};

describe("renewal information", () => {
  it("is undefined when the directory offers none (or offers something that is not a URL)", async () => {
    for (const renewalInfo of [undefined, 42, "javascript:alert(1)"]) {
      const { client, requests } = scriptedCa({ ...acmeDirectory, renewalInfo });
      expect(await client.renewalInfo(ID)).toBeUndefined();
      expect(requests).toEqual([{ method: "GET", url: DIRECTORY }]);
    }
  });

  it("GETs the certificate ID under the directory's renewalInfo, with its Retry-After", async () => {
    const { client, requests } = scriptedCa({ ...acmeDirectory, renewalInfo: "https://ca.test/ari/" }, () =>
      Response.json(
        { suggestedWindow: { start: "2026-03-01T00:00:00Z", end: "2026-03-02T00:00:00Z" } },
        { headers: { "Retry-After": "21600" } },
      ),
    );
    expect(await client.renewalInfo(ID)).toEqual({
      body: '{"suggestedWindow":{"start":"2026-03-01T00:00:00Z","end":"2026-03-02T00:00:00Z"}}',
      retryAfter: "21600",
    });
    expect(await client.renewalInfo("other.id")).toMatchObject({ retryAfter: "21600" });
    // One directory per client; no signed request (RFC 9773 §4.1: the GET is unauthenticated).
    expect(requests).toEqual([
      { method: "GET", url: DIRECTORY },
      { method: "GET", url: `https://ca.test/ari/${ID}` },
      { method: "GET", url: "https://ca.test/ari/other.id" },
    ]);
  });

  it("refuses an answer other than 200, and one longer than a RenewalInfo by its length or its bytes", async () => {
    const answers = [
      new Response("gone", { status: 404 }),
      new Response(null, { status: 204 }),
      new Response("{}", { headers: { "Content-Length": "20000" } }),
      new Response(
        new ReadableStream({
          start(controller) {
            for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(1000).fill(0x20));
            controller.close();
          },
        }),
      ),
    ];
    const { client } = scriptedCa({ ...acmeDirectory, renewalInfo: "https://ca.test/ari" }, () => answers.shift()!);
    const failure = async () => {
      const error = await client.renewalInfo(ID).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AcmeError);
      return (error as AcmeError).message;
    };
    expect(await failure()).toBe(`renewal information https://ca.test/ari/${ID} answered HTTP 404`);
    expect(await failure()).toBe(`renewal information https://ca.test/ari/${ID} answered HTTP 204`);
    expect(await failure()).toBe(
      `renewal information https://ca.test/ari/${ID}: the answer is longer than 16384 bytes`,
    );
    expect(await failure()).toBe(
      `renewal information https://ca.test/ari/${ID}: the answer is longer than 16384 bytes`,
    );
  });

  it("keeps a failed directory for the client's run instead of asking again for every certificate", async () => {
    let directoryCalls = 0;
    const client = new AcmeClient(DIRECTORY, {
      fetch: async () => {
        directoryCalls++;
        return new Response("down", { status: 503 });
      },
      sleep: async () => {},
      challenges: { put: async () => {}, remove: async () => {} },
    });
    await expect(client.renewalInfo(ID)).rejects.toThrow(`ACME directory ${DIRECTORY} answered HTTP 503`);
    await expect(client.renewalInfo(ID)).rejects.toThrow(`ACME directory ${DIRECTORY} answered HTTP 503`);
    expect(directoryCalls).toBe(1);
  });
});

describe("replaces in a new order", () => {
  /** A CA that issues at once (no authorization to answer); `refuseReplaces` answers 409 with that problem type. */
  function issuingCa(refuseReplaces: string | false) {
    return scriptedCa({ ...acmeDirectory, renewalInfo: "https://ca.test/ari" }, ({ url, method, payload }) => {
      const headers = { "Replay-Nonce": `nonce-${Math.random()}` };
      if (method === "HEAD") return new Response(null, { headers });
      if (url === acmeDirectory.newAccount)
        return Response.json(
          { status: "valid" },
          { status: 201, headers: { ...headers, Location: "https://ca.test/acct/1" } },
        );
      if (url === acmeDirectory.newOrder) {
        if (refuseReplaces && payload?.replaces)
          return Response.json({ type: refuseReplaces, detail: "already replaced" }, { status: 409, headers });
        return Response.json(
          { status: "ready", authorizations: [], finalize: "https://ca.test/finalize" },
          { status: 201, headers: { ...headers, Location: "https://ca.test/order/1" } },
        );
      }
      if (url === "https://ca.test/finalize")
        return Response.json({ status: "valid", certificate: "https://ca.test/cert/1" }, { headers });
      if (url === "https://ca.test/cert/1") return new Response("-----BEGIN CERTIFICATE-----\n", { headers });
      return new Response(null, { status: 404, headers });
    });
  }
  const orders = (requests: { url: string; payload?: Record<string, unknown> }[]) =>
    requests.filter((request) => request.url === acmeDirectory.newOrder).map((request) => request.payload);

  it("names the certificate it renews", async () => {
    const { client, requests } = issuingCa(false);
    await client.ensureAccount({ privateJwk: await generateAccountKey() }, undefined);
    expect((await client.obtainCertificate("shop.example", ID)).certificatePem).toBe("-----BEGIN CERTIFICATE-----\n");
    expect(orders(requests)).toEqual([{ identifiers: [{ type: "dns", value: "shop.example" }], replaces: ID }]);
  });

  // RFC 9773's alreadyReplaced, and the 409 `malformed` of pebble 2.6 (and of Boulder before that type existed).
  it.each(["urn:ietf:params:acme:error:alreadyReplaced", "urn:ietf:params:acme:error:malformed"])(
    "orders again without it when the CA answers 409 %s: that certificate was replaced already",
    async (type) => {
      const { client, requests } = issuingCa(type);
      await client.ensureAccount({ privateJwk: await generateAccountKey() }, undefined);
      await client.obtainCertificate("shop.example", ID);
      expect(orders(requests)).toEqual([
        { identifiers: [{ type: "dns", value: "shop.example" }], replaces: ID },
        { identifiers: [{ type: "dns", value: "shop.example" }] },
      ]);
    },
  );

  it("refuses to order before an account is set", async () => {
    const { client } = issuingCa(false);
    await expect(client.obtainCertificate("shop.example")).rejects.toThrow(
      "no ACME account: ensureAccount comes first",
    );
  });
});
