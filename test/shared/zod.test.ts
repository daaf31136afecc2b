// The zod the Worker runs with: wrangler.toml [alias] hands every import of "zod" the members of src/shared/zod.ts.
import { z as honoZ } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { z } from "../../src/shared/zod";

describe("zod in the Worker", () => {
  it("is the subset namespace, also where @hono/zod-openapi hands it to zod-to-openapi", () => {
    expect(honoZ).toBe(z);
    expect("locales" in honoZ).toBe(false);
  });
});
