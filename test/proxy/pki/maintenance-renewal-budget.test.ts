// How many certificates one run of the certificate job asks the CA's renewal information about: at most
// ACME_RENEWAL_INFO_PER_RUN, never-asked ones first, then those whose Retry-After passed longest ago; the others keep
// their window or the one-third rule until a later run.
import { beforeAll, describe, expect, it } from "vitest";
import type { RenewalInfoAnswer } from "../../../src/proxy/pki/acme-client";
import { ariIdOf, askForCertificates, certificateProject, fakeCa, run } from "../../support/proxy-stand-in-ca";

const DOMAINS = ["a.budget.example", "b.budget.example", "c.budget.example"];
const WINDOW: RenewalInfoAnswer = {
  body: JSON.stringify({ suggestedWindow: { start: "2027-07-30T00:00:00Z", end: "2027-08-02T00:00:00Z" } }),
  retryAfter: "3600",
};

beforeAll(async () => {
  await certificateProject("budget", "shop", "e");
  await askForCertificates("budget", "shop", DOMAINS);
});

describe("renewal information requests per run", () => {
  it("asks about at most ACME_RENEWAL_INFO_PER_RUN certificates, the never-asked first, then the longest due", async () => {
    const clock = { now: new Date("2027-06-01T00:00:00Z") };
    const runWith = async (perRun: number) => {
      const stand = fakeCa(clock, { renewalInfo: () => WINDOW });
      await run(clock, stand.issuer, 0.5, perRun).warnings;
      return { asked: stand.asked, obtained: stand.obtained };
    };
    // The first run obtains the three certificates; new ones are asked about from the next run on.
    expect((await runWith(2)).obtained).toHaveLength(3);
    const [a, b, c] = await Promise.all(DOMAINS.map(ariIdOf));

    clock.now = new Date("2027-06-01T00:10:00Z");
    expect(await runWith(0)).toEqual({ asked: [], obtained: [] });
    // Never asked: in certificate order, one a run (the others stay on the one-third rule meanwhile).
    expect(await runWith(1)).toEqual({ asked: [a], obtained: [] });
    clock.now = new Date("2027-06-01T00:20:00Z");
    expect(await runWith(1)).toEqual({ asked: [b], obtained: [] });
    clock.now = new Date("2027-06-01T00:30:00Z");
    expect(await runWith(5)).toEqual({ asked: [c], obtained: [] });
    // Each waits for its Retry-After (an hour): at 01:15 only a's has passed.
    clock.now = new Date("2027-06-01T01:15:00Z");
    expect(await runWith(5)).toEqual({ asked: [a], obtained: [] });
    // At 02:20 all three are due: b's Retry-After passed at 01:20, c's at 01:30, a's (asked again) at 02:15.
    clock.now = new Date("2027-06-01T02:20:00Z");
    expect(await runWith(2)).toEqual({ asked: [b, c], obtained: [] });
  });
});
