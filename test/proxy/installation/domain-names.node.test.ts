// Domain names as the ownership rules read them (pure, plain Node): the reversed form and its range, and which names
// above a domain can claim it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  claimingAncestors,
  rangeUnder,
  reversedName,
  selfAndAncestors,
} from "../../../src/proxy/installation/domain-names";

describe("reversedName", () => {
  it("reverses the labels, not the characters", () => {
    expect(reversedName("login.beta-corp.example")).toBe("example.beta-corp.login");
    expect(reversedName("com")).toBe("com");
  });

  it("puts exactly the names under a domain inside its range (property)", () => {
    const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,6}[a-z0-9])?$/);
    const name = fc.array(label, { minLength: 1, maxLength: 5 }).map((labels) => labels.join("."));
    fc.assert(
      fc.property(name, name, (domain, other) => {
        const { from, to } = rangeUnder(reversedName(domain));
        const reversed = reversedName(other);
        const inRange = reversed > from && reversed < to;
        expect(inRange).toBe(other.endsWith(`.${domain}`));
      }),
    );
  });
});

describe("ancestors", () => {
  it("lists the name and every name above it, nearest first", () => {
    expect(selfAndAncestors("a.b.example")).toEqual(["a.b.example", "b.example", "example"]);
    expect(selfAndAncestors("example")).toEqual(["example"]);
  });

  it("lets no top-level name claim the names under it", () => {
    expect(claimingAncestors("login.beta-corp.example")).toEqual(["beta-corp.example"]);
    expect(claimingAncestors("a.b.co.uk")).toEqual(["b.co.uk", "co.uk"]);
    expect(claimingAncestors("example")).toEqual([]);
  });
});
