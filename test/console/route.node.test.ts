// The console's route reading in plain Node: fragments starting with #/ are routes of decoded segments, any other
// fragment is none, and no fragment, however malformed, throws.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { routeOf } from "../../console/route";

describe("routeOf", () => {
  it("reads a route's segments, each decoded on its own", () => {
    expect(routeOf("")).toEqual([]);
    expect(routeOf("#")).toEqual([]);
    expect(routeOf("#/")).toEqual([]);
    expect(routeOf("#/projects/shop")).toEqual(["projects", "shop"]);
    expect(routeOf("#/projects/caf%C3%A9//")).toEqual(["projects", "café"]);
    // An escaped slash stays inside its segment.
    expect(routeOf("#/projects/a%2Fb")).toEqual(["projects", "a/b"]);
  });

  it("is no route for an in-page link such as the skip link's", () => {
    expect(routeOf("#main")).toBeUndefined();
    expect(routeOf("#projects")).toBeUndefined();
  });

  it("keeps a segment with a malformed escape as typed", () => {
    expect(routeOf("#/projects/%E0%A4%A")).toEqual(["projects", "%E0%A4%A"]);
    expect(routeOf("#/%/jobs")).toEqual(["%", "jobs"]);
  });

  it("never throws, and gives back any segments it was given encoded", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(() => routeOf(`#/${text}`)).not.toThrow();
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1 }), { maxLength: 5 }), (segments) => {
        expect(routeOf(`#/${segments.map(encodeURIComponent).join("/")}`)).toEqual(segments);
      }),
      { numRuns: 1000 },
    );
  });
});
