// The proxy API's bodies nest at most MAX_JSON_DEPTH levels: deeper is 400 in the proxy's wire format, nothing written.
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../../src/shared/http/validate";
import { ADMIN_AUTH, call, errorBody, expectJson, rowsOf } from "../../support/proxy-api";

const postProject = (body: string) =>
  call("/admin/projects", { method: "POST", headers: { Authorization: ADMIN_AUTH }, body });

/** A project body whose unknown field `x` nests `levels` arrays (the object around it is one level more). */
const nested = (label: string, levels: number) => `{"label":"${label}","x":${"[".repeat(levels)}${"]".repeat(levels)}}`;

describe(`JSON bodies of the proxy API nest at most ${MAX_JSON_DEPTH} levels`, () => {
  it("takes a body at the depth, and refuses one level more and a body of 100,000 levels", async () => {
    const taken = await expectJson(postProject(nested("deepok", MAX_JSON_DEPTH - 1)), 200);
    expect(taken.label).toBe("deepok");
    for (const [label, levels] of [
      ["deepone", MAX_JSON_DEPTH],
      ["deepest", 100_000],
    ] as const) {
      expect(await expectJson(postProject(nested(label, levels)), 400)).toEqual(
        errorBody(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`),
      );
    }
    expect(await rowsOf("select label from projects where label like 'deep%' order by label")).toEqual([
      { label: "deepok" },
    ]);
  });
});
