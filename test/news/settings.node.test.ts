// The news settings in plain Node: JWT_EXPIRES_IN accepts only what jose can sign with, so a value that passed the
// check can never fail a sign-up after its user is written.
import fc from "fast-check";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { NewsSettings } from "../../src/news/settings";

const read = (value: string) => NewsSettings.shape.JWT_EXPIRES_IN.safeParse(value);
const accepted = (value: string) => read(value).success;

/** jose's own check of a lifetime: setExpirationTime throws on a format it cannot read. */
const signWith = (lifetime: string) => new SignJWT({}).setIssuedAt().setExpirationTime(lifetime);

describe("JWT_EXPIRES_IN", () => {
  it("accepts a number and a unit, with at most one space between them", () => {
    expect(["7d", "7 d", "12h", "30m", "90 secs", "2weeks", "1W"].map(accepted)).toEqual(Array(7).fill(true));
    expect(["7  d", "7\td", "7\nd", " 7d", "7d ", "-7d", "7.5d", "forever", "7y"].map(accepted)).toEqual(
      Array(9).fill(false),
    );
  });

  it("accepts nothing jose refuses, on any text made of digits, white space and units", () => {
    const piece = fc.constantFrom("7", "12", " ", "  ", "\t", "d", "days", "h", "hrs", "m", "min", "w", "weeks", "x");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 5 }), (pieces) => {
        const value = pieces.join("");
        const setting = read(value);
        if (setting.success) expect(() => signWith(setting.data), JSON.stringify(value)).not.toThrow();
      }),
      { numRuns: 2000 },
    );
  });
});
