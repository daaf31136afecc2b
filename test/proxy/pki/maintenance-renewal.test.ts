// When the certificate job renews, with a stand-in CA and an injected clock and random source: by the CA's ACME
// Renewal Information window (RFC 9773: Retry-After honoured, the drawn point kept, `replaces` sent, unusable answers
// falling back), and short-lived (6-day) certificates when a third of their lifetime remains.
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { RenewalInfoAnswer } from "../../../src/proxy/pki/acme-client";
import {
  ariIdOf,
  askForCertificates,
  certificateProject,
  fakeCa,
  forgetCertificates,
  run,
  windowRow,
} from "../../support/proxy-stand-in-ca";

/** What a run said about one domain (every run handles every domain of the file). */
const about = (warnings: string[], domainName: string) =>
  warnings.filter((w) => w.includes(`acme_${domainName} `) || w.includes(` ${domainName}:`) || w.endsWith(domainName));
const ordersFor = (orders: { domainName: string; replaces?: string }[], domainName: string) =>
  orders.filter((order) => order.domainName === domainName);

const answer = (start: string, end: string, retryAfter: string | null = "3600", extra = {}): RenewalInfoAnswer => ({
  body: JSON.stringify({ suggestedWindow: { start, end }, ...extra }),
  retryAfter,
});

beforeAll(async () => {
  await certificateProject("renewals", "shop", "d");
});

beforeEach(forgetCertificates);

describe("renewal by the CA's ACME Renewal Information (RFC 9773)", () => {
  it("renews in the CA's window, asks again only after Retry-After, keeps the drawn point, sends replaces", async () => {
    await askForCertificates("renewals", "shop", ["window.example"]);
    const clock = { now: new Date("2027-06-01T00:00:00Z") };
    let window = answer("2027-07-30T00:00:00Z", "2027-08-02T00:00:00Z");
    const ca = (draw = 0.5) => {
      const stand = fakeCa(clock, { renewalInfo: () => window });
      return { ...stand, run: () => run(clock, stand.issuer, draw).warnings };
    };
    const first = ca();
    expect(await first.run()).toEqual([
      "INFO: Certificate acme_window.example obtained from CN=window.example, valid until 2027-08-29T23:59:00.000Z",
      "INFO: certificates changed: HAProxy configuration job 100 queued",
    ]);
    expect(first.asked).toEqual([]); // a new certificate is asked about from the next run on
    const id = await ariIdOf("window.example");
    expect(id).toMatch(/^aYhbaw\.[A-Za-z0-9_-]+$/);

    // Its window has not begun: the point is drawn in it (half of the window less a day: Jul 31) and kept.
    clock.now = new Date("2027-06-01T01:00:00Z");
    const second = ca(0.5);
    expect(await second.run()).toEqual([]);
    expect(second.asked).toEqual([id]);
    expect(second.obtained).toEqual([]);
    expect(await windowRow("window.example")).toEqual({
      id,
      start: Date.parse("2027-07-30T00:00:00Z"),
      end: Date.parse("2027-08-02T00:00:00Z"),
      renewAt: Date.parse("2027-07-31T00:00:00Z"),
      nextPollAt: Date.parse("2027-06-01T02:00:00Z"),
      explanationUrl: null,
    });

    // Before Retry-After has passed the CA is not asked.
    clock.now = new Date("2027-06-01T01:59:59Z");
    const early = ca();
    expect(await early.run()).toEqual([]);
    expect(early.asked).toEqual([]);

    // Asked again, the same window keeps the drawn point whatever the next draw.
    clock.now = new Date("2027-06-01T02:00:00Z");
    const again = ca(0.99);
    expect(await again.run()).toEqual([]);
    expect(again.asked).toEqual([id]);
    expect(await windowRow("window.example")).toMatchObject({ renewAt: Date.parse("2027-07-31T00:00:00Z") });

    // The CA moves the window forward (a revocation ahead, say): it has begun, so the certificate is renewed now,
    // although two thirds of its lifetime remain, and the order names it in `replaces`.
    window = answer("2027-06-02T00:00:00Z", "2027-06-02T12:00:00Z", "21600", {
      explanationURL: "https://ca.example/incidents/7",
    });
    clock.now = new Date("2027-06-02T03:00:00Z");
    const moved = ca();
    expect(await moved.run()).toEqual([
      "INFO: Certificate acme_window.example obtained from CN=window.example, valid until 2027-08-31T02:59:00.000Z; renewed in the CA's renewal window 2027-06-02T00:00:00.000Z to 2027-06-02T12:00:00.000Z (https://ca.example/incidents/7)",
      "INFO: certificates changed: HAProxy configuration job 100 queued",
    ]);
    expect(moved.asked).toEqual([id]);
    expect(moved.orders).toEqual([{ domainName: "window.example", replaces: id }]);

    // The new certificate has an ID of its own: the stored window was the old one's, so the CA is asked again.
    const renewedId = await ariIdOf("window.example");
    expect(renewedId).not.toBe(id);
    window = answer("2027-08-01T00:00:00Z", "2027-08-03T00:00:00Z");
    clock.now = new Date("2027-06-02T04:00:00Z");
    const next = ca(0);
    expect(await next.run()).toEqual([]);
    expect(next.asked).toEqual([renewedId]);
    expect(await windowRow("window.example")).toMatchObject({
      id: renewedId,
      renewAt: Date.parse("2027-08-01T00:00:00Z"),
    });
  });

  it("falls back to the last window, or to the lifetime rule, when the CA's answer fails or cannot be used", async () => {
    await askForCertificates("renewals", "shop", ["fallback.example"]);
    const clock = { now: new Date("2027-09-01T00:00:00Z") };
    let renewalInfo: (id: string) => RenewalInfoAnswer = () => {
      throw new Error("renewal information https://ca.example/ari/x answered HTTP 503");
    };
    const ca = () => fakeCa(clock, { renewalInfo: (id) => renewalInfo(id) });
    await run(clock, ca().issuer).warnings;

    // No window yet: the lifetime rule, and a warning.
    clock.now = new Date("2027-09-02T00:00:00Z");
    const failing = ca();
    expect(about(await run(clock, failing.issuer).warnings, "fallback.example")).toEqual([
      "WARN: no renewal information for certificate acme_fallback.example from the CA: renewal information https://ca.example/ari/x answered HTTP 503; it is renewed when a third of its lifetime remains",
    ]);
    expect(ordersFor(failing.orders, "fallback.example")).toEqual([]);

    // A window ending before its start is no answer (RFC 9773 §4.2).
    renewalInfo = () => answer("2027-09-03T00:00:00Z", "2027-09-02T00:00:00Z");
    expect(about(await run(clock, ca().issuer).warnings, "fallback.example")).toEqual([
      "WARN: no renewal information for certificate acme_fallback.example from the CA: suggestedWindow.end does not come after suggestedWindow.start; it is renewed when a third of its lifetime remains",
    ]);

    // A usable window, then an answer too long to read: the window given before stands, and has begun.
    renewalInfo = () => answer("2027-10-20T00:00:00Z", "2027-10-25T00:00:00Z", "60");
    expect(about(await run(clock, ca().issuer, 0).warnings, "fallback.example")).toEqual([]);
    renewalInfo = () => ({ body: "x".repeat(20_000), retryAfter: null });
    clock.now = new Date("2027-10-20T00:05:00Z");
    const before = await ariIdOf("fallback.example");
    const stands = ca();
    expect(about(await run(clock, stands.issuer).warnings, "fallback.example")).toEqual([
      "WARN: no renewal information for certificate acme_fallback.example from the CA: the answer is too long; the window it gave before stands",
      "INFO: Certificate acme_fallback.example obtained from CN=fallback.example, valid until 2028-01-18T00:04:00.000Z; renewed in the CA's renewal window 2027-10-20T00:00:00.000Z to 2027-10-25T00:00:00.000Z",
    ]);
    expect(ordersFor(stands.orders, "fallback.example")).toEqual([
      { domainName: "fallback.example", replaces: before },
    ]);
  });
});

describe("short-lived certificates", () => {
  it("renews a 6-day certificate once 4 days have passed, and the next day after a failure", async () => {
    await askForCertificates("renewals", "shop", ["short.example"]);
    const clock = { now: new Date("2028-05-01T00:00:00Z") };
    const ca = () => fakeCa(clock, { validDays: 6 });
    expect(about(await run(clock, ca().issuer).warnings, "short.example")).toEqual([
      "INFO: Certificate acme_short.example obtained from CN=short.example, valid until 2028-05-06T23:59:00.000Z",
    ]);

    // Valid from 2028-04-30T23:59 to 2028-05-06T23:59: due from 2028-05-04T23:59 (two days left).
    clock.now = new Date("2028-05-04T23:58:59Z");
    const early = ca();
    expect(about(await run(clock, early.issuer).warnings, "short.example")).toEqual([]);
    expect(ordersFor(early.orders, "short.example")).toEqual([]);

    // The first daily run after that point renews; after a failure the next day's run is still before the end, and the
    // certificate is not yet named (that comes with its last day).
    clock.now = new Date("2028-05-05T00:05:00Z");
    const failing = fakeCa(clock, { validDays: 6, failing: new Set(["short.example"]) });
    expect(about(await run(clock, failing.issuer).warnings, "short.example")).toEqual([
      "WARN: no certificate for short.example: authorization of short.example is invalid: connection refused; next attempt on 2028-05-06T00:00:00.000Z",
    ]);

    clock.now = new Date("2028-05-06T00:05:00Z");
    const works = ca();
    expect(about(await run(clock, works.issuer).warnings, "short.example")).toEqual([
      "INFO: Certificate acme_short.example obtained from CN=short.example, valid until 2028-05-12T00:04:00.000Z; renewed with a third of its lifetime left",
    ]);
    expect(ordersFor(works.orders, "short.example")).toEqual([{ domainName: "short.example" }]);
  });
});
