// The runtime configuration set (/rlconfig/files), the debug dump (/rlconfig), their bearer token, and
// /healthcheck, through the real Worker and D1.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { bundledConfigFiles } from "../../../src/ratelimit/config/bundled.gen";
import { CONFIG_CHECK_INTERVAL_MS } from "../../../src/ratelimit/config/provider";
import { replaceConfigFiles } from "../../../src/ratelimit/config/repo";
import { database } from "../../../src/shared/db";
import { call, callJson } from "../../support/worker-http";
import { descriptor, putConfig, RATELIMIT_ADMIN, rateLimit } from "../../support/ratelimit-calls";

const GOOD =
  "domain: admin-a\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: hour\n      requests_per_unit: 5\n";
const OTHER =
  "domain: admin-b\ndescriptors:\n  - key: k\n    value: v\n    shadow_mode: true\n    rate_limit:\n      unit: minute\n      requests_per_unit: 1\n";
const BAD = "domain: admin-c\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: foo\n      requests_per_unit: 5\n";
/** A file of domain `domain` whose one rule, on key k, has these extra `rate_limit` fields. */
const withFields = (domain: string, ...fields: string[]) =>
  `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: second\n      requests_per_unit: 10\n` +
  fields.map((field) => `      ${field}\n`).join("");

/** The README's example: config/ratelimit/example.yaml, bundled. */
const EXAMPLE = bundledConfigFiles["ratelimit/example.yaml"];
/** What the README's example answers for /login while its rule is in force. */
const LOGIN_LIMIT = { requestsPerUnit: 5, unit: "MINUTE", name: "login" };
const loginLimit = async () =>
  (await rateLimit({ domain: "example", descriptors: [descriptor(["path", "/login"])] })).body.statuses[0].currentLimit;
/** The uploaded files in force, by name. */
async function uploadedFiles(): Promise<Record<string, string>> {
  const body = (await (await call("/rlconfig/files", { headers: RATELIMIT_ADMIN })).json()) as {
    files: Record<string, string>;
    uploaded: string[];
  };
  return Object.fromEntries(body.uploaded.map((name) => [name, body.files[name]]));
}
/** The answer to PUT /rlconfig/files's refusals of the body's shape, after the problem. */
const SHAPE =
  'request body must be JSON {"files": {"<name>.yaml": "<YAML text>"}} (or an xDS snapshot {"configs": [...]}); ' +
  "to upload one YAML file as it is, use PUT /rlconfig/files/{name}";

/** Calls the Worker with extra or changed variables (settings are parsed per env object). */
function callWithEnv(vars: Record<string, unknown>, path: string, init: RequestInit = {}) {
  return worker.fetch(
    new Request(`http://example.com${path}`, init),
    { ...env, ...vars } as Env,
    createExecutionContext(),
  );
}

describe("admin token", () => {
  it.each([
    ["GET", "/rlconfig"],
    ["GET", "/rlconfig/files"],
    ["PUT", "/rlconfig/files"],
    ["DELETE", "/rlconfig/files"],
    ["PUT", "/rlconfig/files/a.yaml"],
    ["DELETE", "/rlconfig/files/a.yaml"],
  ])("%s %s answers 401 without the bearer and 404 when no token is configured", async (method, path) => {
    const missing = await call(path, { method });
    expect(missing.status).toBe(401);
    expect(missing.headers.get("WWW-Authenticate")).toBe('Bearer realm="ratelimit"');
    expect(await missing.text()).toBe("unauthorized: send Authorization: Bearer <RATELIMIT_ADMIN_TOKEN>");
    const wrong = await call(path, { method, headers: { Authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    const unset = await callWithEnv({ RATELIMIT_ADMIN_TOKEN: "" }, path, { method, headers: RATELIMIT_ADMIN });
    expect(unset.status).toBe(404);
    expect(await unset.text()).toBe("404 page not found");
  });
});

describe("the configuration set", () => {
  // Each test starts from the bundled set, whatever another stored before it.
  beforeEach(async () => {
    expect((await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN })).status).toBe(200);
  });

  it("serves the bundled files until a runtime set is stored", async () => {
    const response = await call("/rlconfig/files", { headers: RATELIMIT_ADMIN });
    const body = (await response.json()) as { source: string; domains: string[]; files: Record<string, string> };
    expect(body.source).toBe("bundled");
    expect(body.domains).toEqual(["example"]);
    expect(Object.keys(body.files)).toEqual(["example.yaml"]);
    const answer = await rateLimit({ domain: "example", descriptors: [descriptor(["path", "/login"])] });
    expect(answer.body.statuses[0].currentLimit).toEqual({ requestsPerUnit: 5, unit: "MINUTE", name: "login" });
  });

  it("replaces the uploaded files atomically, over the bundled set, and answers its domains", async () => {
    const put = await putConfig({ "b.yaml": OTHER, "a.yaml": GOOD });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ domains: ["admin-a", "admin-b", "example"] });
    const files = (await (await call("/rlconfig/files", { headers: RATELIMIT_ADMIN })).json()) as Record<
      string,
      unknown
    >;
    expect(files).toEqual({
      source: "runtime",
      version: expect.any(Number),
      domains: ["admin-a", "admin-b", "example"],
      files: { "a.yaml": GOOD, "b.yaml": OTHER, "example.yaml": EXAMPLE },
      uploaded: ["a.yaml", "b.yaml"],
    });
    // The README's example keeps its rules: the upload did not touch example.yaml.
    expect(await loginLimit()).toEqual(LOGIN_LIMIT);
    const readme = { domain: "example", descriptors: [{ entries: [{ key: "remote_address", value: "10.0.0.1" }] }] };
    expect((await rateLimit(readme)).body.statuses[0].currentLimit).toEqual({ requestsPerUnit: 10, unit: "MINUTE" });
    // A second upload replaces the first one's files, and keeps the bundled set.
    expect(await (await putConfig({ "b.yaml": OTHER })).json()).toEqual({ domains: ["admin-b", "example"] });
    expect(await uploadedFiles()).toEqual({ "b.yaml": OTHER });
    expect(await loginLimit()).toEqual(LOGIN_LIMIT);
  });

  it("refuses a bad file with the file name and keeps the previous set", async () => {
    await putConfig({ "a.yaml": GOOD });
    const refused = await putConfig({ "a.yaml": GOOD, "bad.yaml": BAD });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toBe("text/plain; charset=UTF-8");
    expect(await refused.text()).toBe("bad.yaml: invalid rate limit unit 'foo'");
    expect(await uploadedFiles()).toEqual({ "a.yaml": GOOD });
    const stored = await env.DB.prepare("SELECT name FROM ratelimit_config_files ORDER BY name").all();
    expect(stored.results).toEqual([{ name: "a.yaml" }]);
  });

  it.each([
    ["a body that is not JSON", "{", `request body is not valid JSON; ${SHAPE}`],
    ["a missing files object", {}, `files: Invalid input: expected record, received undefined; ${SHAPE}`],
    [
      "files as a list",
      { files: [{ name: "a.yaml", yaml: GOOD }] },
      `files: Invalid input: expected record, received array; ${SHAPE}`,
    ],
    [
      "a file name without .yaml",
      { files: { "a.yml": GOOD } },
      "a.yml: file names must end in .yaml and contain no slashes or spaces",
    ],
    ["an unknown field", { files: {}, extra: 1 }, `Unrecognized key: "extra"; ${SHAPE}`],
  ])("refuses %s with 400", async (_label, body, error) => {
    const response = await callJson("/rlconfig/files", "PUT", body, RATELIMIT_ADMIN);
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(error);
  });

  it("answers the YAML file itself, sent as the body, with the shape it takes and the route for one file", async () => {
    await putConfig({ "a.yaml": GOOD });
    const response = await call("/rlconfig/files", {
      method: "PUT",
      headers: { ...RATELIMIT_ADMIN, "Content-Type": "application/yaml" },
      body: OTHER,
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("text/plain; charset=UTF-8");
    expect(await response.text()).toBe(`request body is not valid JSON; ${SHAPE}`);
    expect(await uploadedFiles()).toEqual({ "a.yaml": GOOD });
  });

  it("refuses two files with one domain unless MERGE_DOMAIN_CONFIG is true", async () => {
    const second =
      "domain: admin-a\ndescriptors:\n  - key: other\n    rate_limit:\n      unit: day\n      requests_per_unit: 1\n";
    const refused = await putConfig({ "a.yaml": GOOD, "a2.yaml": second });
    expect(await refused.text()).toBe("a2.yaml: duplicate domain 'admin-a' in config file");
    const merged = await callWithEnv({ MERGE_DOMAIN_CONFIG: "true" }, "/rlconfig/files", {
      method: "PUT",
      headers: RATELIMIT_ADMIN,
      body: JSON.stringify({ files: { "a.yaml": GOOD, "a2.yaml": second } }),
    });
    expect(merged.status).toBe(200);
    expect(await merged.json()).toEqual({ domains: ["admin-a", "example"] });
  });

  it("prints the loaded configuration in the reference's debug format", async () => {
    const quota =
      "domain: admin-q\ndescriptors:\n  - key: k\n    quota_mode: true\n    rate_limit:\n      unit: second\n" +
      "      requests_per_unit: 10\n      algorithm: sliding_window\n";
    await putConfig({ "a.yaml": GOOD, "b.yaml": OTHER, "q.yaml": quota });
    // No bundled files in this application directory: the dump shows the uploaded ones alone.
    const response = await callWithEnv({ RUNTIME_APPDIRECTORY: "none" }, "/rlconfig", { headers: RATELIMIT_ADMIN });
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await response.text()).toBe(
      "admin-a.k: unit=HOUR requests_per_unit=5, shadow_mode: false, quota_mode: false\n" +
        "admin-b.k_v: unit=MINUTE requests_per_unit=1, shadow_mode: true, quota_mode: false\n" +
        "admin-q.k: unit=SECOND requests_per_unit=10, shadow_mode: false, quota_mode: true, " +
        "algorithm: sliding_window\n",
    );
  });

  it.each([
    [
      "an unknown algorithm",
      ["algorithm: leaky_bucket"],
      "rate_limit.algorithm 'leaky_bucket' is not one of fixed_window, sliding_window, token_bucket",
    ],
    [
      "burst on a window algorithm",
      ["algorithm: sliding_window", "burst: 5"],
      "rate_limit.burst is only for algorithm token_bucket, not sliding_window",
    ],
    [
      "a unit_multiplier below 1",
      ["unit_multiplier: 0"],
      "rate_limit.unit_multiplier must be an integer from 1 to 1000000, but found '0'",
    ],
    [
      "a fractional burst",
      ["algorithm: token_bucket", "burst: 2.5"],
      "rate_limit.burst must be an integer from 1 to 4294967295, but found '2.5'",
    ],
  ])("refuses %s with 400 naming the field and keeps the previous set", async (_label, fields, message) => {
    await putConfig({ "a.yaml": GOOD });
    const refused = await putConfig({ "a.yaml": GOOD, "algo.yaml": withFields("admin-algo", ...fields) });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toBe(`algo.yaml: ${message}`);
    expect(await uploadedFiles()).toEqual({ "a.yaml": GOOD });
    const answer = await rateLimit({ domain: "admin-algo", descriptors: [descriptor(["k", "x"])] });
    expect(answer.body).toEqual({ overallCode: "OK", statuses: [{ code: "OK" }] });
  });

  it("refuses an algorithm the memcache store cannot count atomically, naming the rule", async () => {
    await putConfig({ "a.yaml": GOOD });
    const memcache = { BACKEND_TYPE: "memcache", MEMCACHE_HOST_PORT: "127.0.0.1:11211" };
    const put = (files: Record<string, string>, vars: Record<string, string> = memcache) =>
      callWithEnv(vars, "/rlconfig/files", {
        method: "PUT",
        headers: RATELIMIT_ADMIN,
        body: JSON.stringify({ files }),
      });
    const sliding = withFields("admin-mc", "algorithm: sliding_window");
    const refused = await put({ "mc.yaml": sliding });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toBe(
      "mc.yaml: rule 'admin-mc.k' uses algorithm sliding_window, which the counter store chosen by " +
        "BACKEND_TYPE=memcache cannot count atomically (only fixed_window)",
    );
    expect(await uploadedFiles()).toEqual({ "a.yaml": GOOD });
    // A longer fixed window is still one counter per window there; the default store takes the sliding window.
    expect((await put({ "mc.yaml": withFields("admin-mc", "unit_multiplier: 3") })).status).toBe(200);
    expect((await put({ "mc.yaml": sliding }, {})).status).toBe(200);
  });

  it("returns to the bundled files on DELETE", async () => {
    await putConfig({ "a.yaml": GOOD });
    const response = await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
    expect(await response.json()).toEqual({ source: "bundled", domains: ["example"] });
    const files = (await (await call("/rlconfig/files", { headers: RATELIMIT_ADMIN })).json()) as { source: string };
    expect(files.source).toBe("bundled");
    expect((await env.DB.prepare("SELECT count(*) AS n FROM ratelimit_config_files").first())!.n).toBe(0);
  });

  it("reaches an isolate that did not write it within two check intervals", async () => {
    // Another isolate's view: a fresh env object has its own settings and its own cached config.
    const elsewhere = { ...env } as Env;
    const ask = async () => {
      const response = await worker.fetch(
        new Request("http://example.com/json", {
          method: "POST",
          body: JSON.stringify({ domain: "admin-a", descriptors: [descriptor(["k", "x"])] }),
        }),
        elsewhere,
        createExecutionContext(),
      );
      return ((await response.json()) as { statuses: { currentLimit?: { requestsPerUnit: number } }[] }).statuses[0]
        .currentLimit;
    };
    // The isolate's clock stands still unless moved, so the interval is measured on it and not on a busy machine.
    const start = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: start });
    try {
      await putConfig({ "a.yaml": GOOD });
      expect(await ask()).toEqual({ requestsPerUnit: 5, unit: "HOUR" });
      // A write this isolate did not make (as if from another isolate): the elsewhere view learns of it by polling.
      await replaceConfigFiles(database(env.DB), [{ name: "a.yaml", text: GOOD.replace("5", "7") }]);
      vi.setSystemTime(start + CONFIG_CHECK_INTERVAL_MS - 1);
      expect(await ask()).toEqual({ requestsPerUnit: 5, unit: "HOUR" });
      vi.setSystemTime(start + 2 * CONFIG_CHECK_INTERVAL_MS);
      expect(await ask()).toEqual({ requestsPerUnit: 7, unit: "HOUR" });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("GET /healthcheck", () => {
  it("answers 200 OK while a configuration with a domain is loaded", async () => {
    await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
    const response = await call("/healthcheck");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("OK");
  });

  it("answers 500 while no configuration is loaded (wrangler.toml's setting), and OK once a file is", async () => {
    await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
    // No bundled file in this application directory and nothing uploaded: no rule at all.
    const none = { RUNTIME_APPDIRECTORY: "none" };
    const unhealthy = await callWithEnv(none, "/healthcheck");
    expect(unhealthy.status).toBe(500);
    expect(await unhealthy.text()).toBe("");
    const put = await callWithEnv(none, "/rlconfig/files/a.yaml", {
      method: "PUT",
      headers: { ...RATELIMIT_ADMIN, "Content-Type": "application/yaml" },
      body: GOOD,
    });
    expect(await put.json()).toEqual({ domains: ["admin-a"], uploaded: ["a.yaml"] });
    const healthy = await callWithEnv(none, "/healthcheck");
    expect(healthy.status).toBe(200);
    expect(await healthy.text()).toBe("OK");
  });

  it("answers 200 OK without a loaded domain when HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED is false", async () => {
    await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
    const response = await callWithEnv(
      { RUNTIME_APPDIRECTORY: "none", HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: "false" },
      "/healthcheck",
    );
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("OK");
  });

  it("loads an empty application directory as an empty configuration", async () => {
    await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
    const response = await callWithEnv({ RUNTIME_APPDIRECTORY: "missing" }, "/json", {
      method: "POST",
      body: JSON.stringify({ domain: "example", descriptors: [descriptor(["k", "v"])] }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ overallCode: "OK", statuses: [{ code: "OK" }] });
  });

  it("answers 400 when no configuration could be loaded, and health follows", async () => {
    // A set stored under MERGE_DOMAIN_CONFIG=true cannot load in an isolate whose settings forbid merging.
    const second =
      "domain: admin-a\ndescriptors:\n  - key: other\n    rate_limit:\n      unit: day\n      requests_per_unit: 1\n";
    const stored = await callWithEnv({ MERGE_DOMAIN_CONFIG: "true" }, "/rlconfig/files", {
      method: "PUT",
      headers: RATELIMIT_ADMIN,
      body: JSON.stringify({ files: { "a.yaml": GOOD, "a2.yaml": second } }),
    });
    expect(stored.status).toBe(200);
    const response = await callWithEnv({ MERGE_DOMAIN_CONFIG: "false" }, "/json", {
      method: "POST",
      body: JSON.stringify({ domain: "admin-a", descriptors: [descriptor(["k", "v"])] }),
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toBe("no rate limit configuration loaded");
    const health = await callWithEnv({ MERGE_DOMAIN_CONFIG: "false" }, "/healthcheck");
    expect(health.status).toBe(500);
    expect(await health.text()).toBe("");
  });
});
