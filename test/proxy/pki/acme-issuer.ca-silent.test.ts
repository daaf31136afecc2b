// A CA that gives no answer: each request ends within ACME_REQUEST_TIMEOUT, and the run then asks it nothing more.
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { AcmeError, CA_UNREACHABLE } from "../../../src/proxy/pki/acme-client";
import { acmeIssuer } from "../../../src/proxy/pki/acme-issuer";
import {
  askForCertificates,
  attempt,
  certificateProject,
  db,
  fakeCa,
  forgetCertificates,
  run,
} from "../../support/proxy-stand-in-ca";

const DIRECTORY = "https://ca.test/directory";
const directory = {
  newNonce: "https://ca.test/nonce",
  newAccount: "https://ca.test/account",
  newOrder: "https://ca.test/order",
  renewalInfo: "https://ca.test/ari",
};

/** Until the request's signal fires: what a CA that accepted the connection and never answers gives. */
const never = (init: RequestInit | undefined) =>
  new Promise<never>((_, reject) => init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason)));

/** A CA whose directory answers and whose every other URL gets `answer`. */
function caAnswering(answer: (init: RequestInit | undefined) => Promise<Response>) {
  return vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    return url === DIRECTORY ? Response.json(directory) : answer(init);
  });
}

const issuerWithTimeout = () =>
  acmeIssuer(db(), { ACME_DIRECTORY_URL: DIRECTORY, ACME_EMAIL: undefined, ACME_REQUEST_TIMEOUT: 1000 });

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the issuer's requests to the CA", () => {
  it("end after ACME_REQUEST_TIMEOUT when the CA never answers, and the run's later ones are not sent", async () => {
    const fetched = caAnswering(never);
    const issuer = issuerWithTimeout();
    const failure = await issuer.prepare().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AcmeError);
    expect(failure).toMatchObject({
      type: CA_UNREACHABLE,
      message: "https://ca.test/nonce did not answer within 1 s (ACME_REQUEST_TIMEOUT)",
    });
    await expect(issuer.renewalInfo("aYhbaw.AAAA")).rejects.toThrow(
      "https://ca.test/ari/aYhbaw.AAAA not asked: the CA at https://ca.test/nonce did not answer within 1 s " +
        "(ACME_REQUEST_TIMEOUT) earlier in this run",
    );
    expect(fetched.mock.calls.map(([input]) => String(input))).toEqual([DIRECTORY, "https://ca.test/nonce"]);
  });

  it("count an answer whose body never ends as no answer, and do not hold more of a long one than its bound", async () => {
    let pulled = 0;
    caAnswering(async (init) => {
      const stalled = new ReadableStream({
        start(controller) {
          init!.signal!.addEventListener("abort", () => controller.error(init!.signal!.reason));
        },
      });
      return new Response(stalled);
    });
    await expect(issuerWithTimeout().renewalInfo("aYhbaw.AAAA")).rejects.toMatchObject({
      type: CA_UNREACHABLE,
      message:
        "renewal information https://ca.test/ari/aYhbaw.AAAA: the CA did not send its whole answer within " +
        "ACME_REQUEST_TIMEOUT",
    });
    vi.restoreAllMocks();
    caAnswering(async () => {
      const endless = new ReadableStream({
        pull(controller) {
          pulled += 65_536;
          controller.enqueue(new Uint8Array(65_536));
        },
      });
      return new Response(endless);
    });
    await expect(issuerWithTimeout().renewalInfo("aYhbaw.BBBB")).rejects.toThrow(
      "renewal information https://ca.test/ari/aYhbaw.BBBB: the answer is longer than 16384 bytes",
    );
    expect(pulled).toBeLessThanOrEqual(2 * 65_536);
  });
});

describe("a certificate run whose CA gives no answer", () => {
  const silent = new AcmeError(
    "https://ca.test/order did not answer within 30 s (ACME_REQUEST_TIMEOUT)",
    CA_UNREACHABLE,
  );

  beforeAll(async () => {
    await certificateProject("casilent", "web", "a");
  });

  beforeEach(forgetCertificates);

  it("orders nothing more after the order that got none, and charges no other name", async () => {
    const names = ["a.silent.example", "b.silent.example", "c.silent.example"];
    await askForCertificates("casilent", "web", names);
    const clock = { now: new Date("2026-12-22T00:05:00Z") };
    const ca = fakeCa(clock, { failing: new Set(names), obtainError: silent });
    expect(await run(clock, ca.issuer).warnings).toEqual([
      `WARN: no certificate for a.silent.example: ${silent.message}; next attempt on 2026-12-23T00:00:00.000Z`,
      "WARN: the CA gave no answer: 2 more due, not tried until the next run",
    ]);
    expect(ca.obtained).toEqual(["a.silent.example"]);
    expect(await attempt("b.silent.example")).toBeNull();
    expect(await attempt("c.silent.example")).toBeNull();
  });

  it("asks no further renewal information after a question that got no answer", async () => {
    const names = ["d.silent.example", "e.silent.example", "f.silent.example"];
    await askForCertificates("casilent", "web", names);
    const clock = { now: new Date("2027-01-10T00:00:00Z") };
    let answering = true;
    const ca = fakeCa(clock, {
      renewalInfo: () => {
        if (answering) return { body: JSON.stringify({}), retryAfter: null };
        throw silent;
      },
    });
    await run(clock, ca.issuer).warnings;
    expect(ca.obtained).toEqual(names);
    answering = false;
    clock.now = new Date("2027-01-10T01:00:00Z");
    const warnings = await run(clock, ca.issuer).warnings;
    expect(ca.asked).toHaveLength(1);
    expect(warnings).toEqual([
      `WARN: no renewal information for certificate acme_d.silent.example from the CA: ${silent.message}; it is renewed when a third of its lifetime remains`,
    ]);
  });
});
