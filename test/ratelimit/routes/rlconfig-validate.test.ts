// POST /rlconfig/validate and /rlconfig/validate/{name}: the PUT routes' dry run through the real Worker and D1. What
// would load, or the very 400 the PUT gives for the same body; the files and rules in force never change.
import { describe, expect, it } from "vitest";
import { call, callJson } from "../../support/worker-http";
import { descriptor, installConfig, RATELIMIT_ADMIN, rateLimit } from "../../support/ratelimit-calls";

/** A file of `domain` with one rule on key k of `limit` per hour, and a unit that may be wrong. */
const rule = (domain: string, limit: number, unit = "hour") =>
  `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: ${unit}\n      requests_per_unit: ${limit}\n`;
/** The bundled config/ratelimit/example.yaml has 4 rules. */
const BUNDLED_RULES = 4;

const validate = (body: unknown, headers: Record<string, string> = RATELIMIT_ADMIN) =>
  callJson("/rlconfig/validate", "POST", body, headers);
const validateFile = (name: string, yaml: string, type = "application/yaml") =>
  call(`/rlconfig/validate/${name}`, {
    method: "POST",
    headers: { ...RATELIMIT_ADMIN, "Content-Type": type },
    body: yaml,
  });
const putFile = (name: string, yaml: string) =>
  call(`/rlconfig/files/${name}`, {
    method: "PUT",
    headers: { ...RATELIMIT_ADMIN, "Content-Type": "application/yaml" },
    body: yaml,
  });
const answerOf = async (response: Response) => ({ status: response.status, text: await response.text() });
const limitOf = async (domain: string) =>
  (await rateLimit({ domain, descriptors: [descriptor(["k", "x"])] })).body.statuses[0].currentLimit;
const inForce = async () => (await call("/rlconfig/files", { headers: RATELIMIT_ADMIN })).json();

describe("POST /rlconfig/validate", () => {
  it.each(["/rlconfig/validate", "/rlconfig/validate/a.yaml"])("%s answers 401 without the bearer", async (path) => {
    const response = await call(path, { method: "POST", body: "{}" });
    expect(response.status).toBe(401);
  });

  it("answers the domains and rule count that would load, and changes nothing", async () => {
    await installConfig({ "val-a.yaml": rule("val-a", 5) });
    const before = await inForce();
    const response = await validate({ files: { "val-b.yaml": rule("val-b", 7), "val-c.yaml": rule("val-c", 9) } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ domains: ["example", "val-b", "val-c"], rules: BUNDLED_RULES + 2 });
    // The old rules keep answering, and nothing of the validated set was installed.
    expect(await inForce()).toEqual(before);
    expect(await limitOf("val-a")).toEqual({ requestsPerUnit: 5, unit: "HOUR" });
    expect((await rateLimit({ domain: "val-b", descriptors: [descriptor(["k", "x"])] })).body.statuses[0]).toEqual({
      code: "OK",
    });
  });

  it("gives the PUT's own 400 for a set that would not load, keeping the rules in force", async () => {
    await installConfig({ "val-d.yaml": rule("val-d", 5) });
    const bad = { files: { "val-e.yaml": rule("val-e", 5, "fortnight") } };
    const validated = await answerOf(await validate(bad));
    expect(validated).toEqual({ status: 400, text: "val-e.yaml: invalid rate limit unit 'fortnight'" });
    expect(await limitOf("val-d")).toEqual({ requestsPerUnit: 5, unit: "HOUR" });
    expect(await answerOf(await callJson("/rlconfig/files", "PUT", bad, RATELIMIT_ADMIN))).toEqual(validated);
  });

  it("gives the PUT's 400 for a body of the wrong shape and for an xDS snapshot that does not read", async () => {
    for (const body of [{ file: {} }, { configs: [{ name: "m", domain: "val-x", descriptors: [{ bogus: 1 }] }] }]) {
      const validated = await answerOf(await validate(body));
      expect(validated.status).toBe(400);
      expect(await answerOf(await callJson("/rlconfig/files", "PUT", body, RATELIMIT_ADMIN))).toEqual(validated);
    }
  });

  it("validates an xDS snapshot as the PUT would load it", async () => {
    const configs = [
      {
        name: "mesh",
        domain: "val-xds",
        descriptors: [{ key: "k", rateLimit: { unit: "MINUTE", requestsPerUnit: 3 } }],
      },
    ];
    const response = await validate({ configs });
    expect(await response.json()).toEqual({ domains: ["example", "val-xds"], rules: BUNDLED_RULES + 1 });
  });
});

describe("POST /rlconfig/validate/{name}", () => {
  it("validates one file laid over the set in force, and changes nothing", async () => {
    await installConfig({ "val-f.yaml": rule("val-f", 5) });
    const before = await inForce();
    const response = await validateFile("val-f.yaml", rule("val-f", 50));
    expect(await response.json()).toEqual({ domains: ["example", "val-f"], rules: BUNDLED_RULES + 1 });
    const added = await validateFile("val-g.yaml", rule("val-g", 1));
    expect(await added.json()).toEqual({ domains: ["example", "val-f", "val-g"], rules: BUNDLED_RULES + 2 });
    expect(await inForce()).toEqual(before);
    expect(await limitOf("val-f")).toEqual({ requestsPerUnit: 5, unit: "HOUR" });
  });

  it("gives the PUT's own 400 and 415", async () => {
    await installConfig({ "val-h.yaml": rule("val-h", 5) });
    const bad = rule("val-h", 5, "minit");
    const validated = await answerOf(await validateFile("val-h.yaml", bad));
    expect(validated).toEqual({ status: 400, text: "val-h.yaml: invalid rate limit unit 'minit'" });
    expect(await answerOf(await putFile("val-h.yaml", bad))).toEqual(validated);
    expect(await limitOf("val-h")).toEqual({ requestsPerUnit: 5, unit: "HOUR" });
    expect((await validateFile("val-h.yaml", rule("val-h", 5), "application/x-www-form-urlencoded")).status).toBe(415);
    expect((await validateFile(".hidden.yaml", rule("val-h", 5))).status).toBe(400);
  });
});
