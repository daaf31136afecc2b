// PUT and DELETE /rlconfig/files/{name} through the real Worker and D1: one uploaded file at a time over the bundled
// set, the other files kept, the same validation as PUT /rlconfig/files and nothing written on a refusal.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../../src/index";
import { putConfigFile, readConfigSnapshot } from "../../../src/ratelimit/config/repo";
import { ConfigSetChanged } from "../../../src/ratelimit/errors";
import { database } from "../../../src/shared/db";
import { call } from "../../support/worker-http";
import { descriptor, putConfig, RATELIMIT_ADMIN, rateLimit } from "../../support/ratelimit-calls";

const yamlFile = (domain: string, perMinute = 5) =>
  `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: minute\n      requests_per_unit: ${perMinute}\n`;
const LOGIN_LIMIT = { requestsPerUnit: 5, unit: "MINUTE", name: "login" };

/**
 * PUT /rlconfig/files/{name} with a YAML body (no Content-Type when `type` is empty), through the Worker's own env, or
 * through an env with these extra variables (its own settings, so its own view of the set).
 */
function putFile(name: string, text: string, type = "application/yaml", vars?: Record<string, string>) {
  const init = {
    method: "PUT",
    headers: { ...RATELIMIT_ADMIN, ...(type && { "Content-Type": type }) },
    // A string body would be sent as text/plain.
    body: type ? text : new TextEncoder().encode(text),
  };
  if (vars === undefined) return call(`/rlconfig/files/${name}`, init);
  const request = new Request(`http://example.com/rlconfig/files/${name}`, init);
  return worker.fetch(request, { ...env, ...vars } as Env, createExecutionContext());
}
const deleteFile = (name: string) => call(`/rlconfig/files/${name}`, { method: "DELETE", headers: RATELIMIT_ADMIN });
const answerOf = async (response: Response) => ({ status: response.status, body: await response.text() });

/** The uploaded files in force, by name, and the domains. */
async function inForce(): Promise<{ uploaded: Record<string, string>; domains: string[] }> {
  const body = (await (await call("/rlconfig/files", { headers: RATELIMIT_ADMIN })).json()) as {
    files: Record<string, string>;
    uploaded: string[];
    domains: string[];
  };
  return { uploaded: Object.fromEntries(body.uploaded.map((name) => [name, body.files[name]])), domains: body.domains };
}
const storedNames = async () =>
  (await env.DB.prepare("SELECT name FROM ratelimit_config_files ORDER BY name").all()).results.map((row) => row.name);
/** The README's rate-limit example, as pasted: its limit, 10 a minute per client address. */
const readmeExample = async () =>
  (await rateLimit({ domain: "example", descriptors: [{ entries: [{ key: "remote_address", value: "10.0.0.1" }] }] }))
    .body.statuses[0].currentLimit;
const README_LIMIT = { requestsPerUnit: 10, unit: "MINUTE" };
const limitOf = async (domain: string, key: string, value: string) =>
  (await rateLimit({ domain, descriptors: [descriptor([key, value])] })).body.statuses[0].currentLimit;

describe("PUT /rlconfig/files/{name}", () => {
  it("adds one file, keeps the other uploaded files and the bundled set, and the README example keeps working", async () => {
    await putConfig({ "a.yaml": yamlFile("one-a") });
    const put = await putFile("b.yaml", yamlFile("one-b", 7));
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ domains: ["one-a", "one-b", "example"], uploaded: ["a.yaml", "b.yaml"] });
    expect(await inForce()).toEqual({
      uploaded: { "a.yaml": yamlFile("one-a"), "b.yaml": yamlFile("one-b", 7) },
      domains: ["one-a", "one-b", "example"],
    });
    expect(await limitOf("one-b", "k", "x")).toEqual({ requestsPerUnit: 7, unit: "MINUTE" });
    expect(await limitOf("one-a", "k", "x")).toEqual({ requestsPerUnit: 5, unit: "MINUTE" });
    expect(await limitOf("example", "path", "/login")).toEqual(LOGIN_LIMIT);
    expect(await readmeExample()).toEqual(README_LIMIT);
    // The same name again replaces that file only.
    expect((await putFile("b.yaml", yamlFile("one-b", 9))).status).toBe(200);
    expect(await limitOf("one-b", "k", "x")).toEqual({ requestsPerUnit: 9, unit: "MINUTE" });
    expect(await storedNames()).toEqual(["a.yaml", "b.yaml"]);
    expect(await readmeExample()).toEqual(README_LIMIT);
  });

  it.each(["application/yaml", "application/x-yaml", "text/yaml", "text/plain", "text/plain; charset=utf-8"])(
    "takes the file as %s",
    async (type) => {
      await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
      const put = await putFile("typed.yaml", yamlFile("typed"), type);
      expect(await put.json()).toEqual({ domains: ["example", "typed"], uploaded: ["typed.yaml"] });
    },
  );

  it.each([
    ["application/x-www-form-urlencoded", "'application/x-www-form-urlencoded'"],
    ["application/json", "'application/json'"],
    ["", "missing"],
  ])("refuses the Content-Type %j with 415 naming the ones it takes", async (type, shown) => {
    await putConfig({ "a.yaml": yamlFile("one-a") });
    expect(await answerOf(await putFile("b.yaml", yamlFile("one-b"), type))).toEqual({
      status: 415,
      body:
        "Content-Type must be one of application/yaml, application/x-yaml, text/yaml, text/plain (the YAML file as " +
        `it is), this request's is ${shown}; with curl: -H 'Content-Type: application/yaml' --data-binary @file.yaml`,
    });
    expect(await storedNames()).toEqual(["a.yaml"]);
  });

  it("refuses a file that does not load, naming it, and keeps the set in force", async () => {
    await putConfig({ "a.yaml": yamlFile("one-a") });
    const bad = yamlFile("one-bad").replace("unit: minute", "unit: minit");
    expect(await answerOf(await putFile("bad.yaml", bad))).toEqual({
      status: 400,
      body: "bad.yaml: invalid rate limit unit 'minit'",
    });
    // A file clashing with another one's domain is refused the same way (MERGE_DOMAIN_CONFIG is false).
    expect(await answerOf(await putFile("z.yaml", yamlFile("one-a")))).toEqual({
      status: 400,
      body: "z.yaml: duplicate domain 'one-a' in config file",
    });
    expect(await inForce()).toEqual({ uploaded: { "a.yaml": yamlFile("one-a") }, domains: ["one-a", "example"] });
    expect(await storedNames()).toEqual(["a.yaml"]);
    expect(await limitOf("example", "path", "/login")).toEqual(LOGIN_LIMIT);
  });

  it.each([
    ["a name without .yaml", "a.yml"],
    ["a hidden name", ".a.yaml"],
    ["a name with a space", "a%20b.yaml"],
    ["a name with an encoded slash", "..%2Fa.yaml"],
    ["a name with a backslash", "a%5Cb.yaml"],
  ])("refuses %s with 400 naming the rule", async (_label, name) => {
    await putConfig({ "a.yaml": yamlFile("one-a") });
    const rule =
      "a file name is 6 to 255 characters: letters, digits, '.', '_' and '-', not starting with '.', ending in .yaml";
    expect(await answerOf(await putFile(name, yamlFile("named")))).toEqual({
      status: 400,
      body: `${decodeURIComponent(name)}: ${rule}`,
    });
    expect(await answerOf(await deleteFile(name))).toEqual({
      status: 400,
      body: `${decodeURIComponent(name)}: ${rule}`,
    });
    expect(await storedNames()).toEqual(["a.yaml"]);
  });

  it("takes a name of 255 characters and refuses one of 256", async () => {
    await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
    const longest = `${"n".repeat(250)}.yaml`;
    expect((await putFile(longest, yamlFile("long"))).status).toBe(200);
    const tooLong = `${"n".repeat(251)}.yaml`;
    expect(await answerOf(await putFile(tooLong, yamlFile("long")))).toEqual({
      status: 400,
      body:
        `${"n".repeat(32)}...: a file name is 6 to 255 characters: letters, digits, '.', '_' and '-', ` +
        "not starting with '.', ending in .yaml",
    });
    expect(await storedNames()).toEqual([longest]);
  });

  it("refuses a body over RATELIMIT_CONFIG_MAX_BODY_BYTES with 413, and a file past RATELIMIT_CONFIG_MAX_FILES", async () => {
    await putConfig({ "a.yaml": yamlFile("one-a") });
    const small = { RATELIMIT_CONFIG_MAX_BODY_BYTES: "64" };
    expect(await answerOf(await putFile("b.yaml", yamlFile("one-b"), "application/yaml", small))).toEqual({
      status: 413,
      body: "request body is larger than 64 bytes (the limit set by RATELIMIT_CONFIG_MAX_BODY_BYTES)",
    });
    const oneFile = { RATELIMIT_CONFIG_MAX_FILES: "1" };
    expect(await answerOf(await putFile("b.yaml", yamlFile("one-b"), "application/yaml", oneFile))).toEqual({
      status: 400,
      body: "b.yaml would make 2 uploaded files, more than 1 (the limit set by RATELIMIT_CONFIG_MAX_FILES)",
    });
    // Replacing the one file stays within the limit.
    expect((await putFile("a.yaml", yamlFile("one-a", 2), "application/yaml", oneFile)).status).toBe(200);
    expect(await storedNames()).toEqual(["a.yaml"]);
  });

  it("replaces the bundled file of its name, and DELETE brings the bundled one back", async () => {
    await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
    const mine =
      "domain: example\ndescriptors:\n  - key: path\n    rate_limit:\n      unit: hour\n      requests_per_unit: 2\n";
    expect(await (await putFile("example.yaml", mine)).json()).toEqual({
      domains: ["example"],
      uploaded: ["example.yaml"],
    });
    expect(await limitOf("example", "path", "/login")).toEqual({ requestsPerUnit: 2, unit: "HOUR" });
    expect(await (await deleteFile("example.yaml")).json()).toEqual({ domains: ["example"], uploaded: [] });
    expect(await limitOf("example", "path", "/login")).toEqual(LOGIN_LIMIT);
    expect(await inForce()).toEqual({ uploaded: {}, domains: ["example"] });
  });

  it("answers 409 and writes nothing when the set changed after it was read", async () => {
    await putConfig({ "a.yaml": yamlFile("one-a") });
    const db = database(env.DB);
    const { state } = await readConfigSnapshot(db);
    await putConfig({ "a.yaml": yamlFile("one-a"), "c.yaml": yamlFile("one-c") });
    await expect(putConfigFile(db, { name: "b.yaml", text: yamlFile("one-b") }, state.version)).rejects.toThrow(
      new ConfigSetChanged(),
    );
    expect(await storedNames()).toEqual(["a.yaml", "c.yaml"]);
    expect((await readConfigSnapshot(db)).state.version).toBe(state.version + 1);
  });
});

describe("DELETE /rlconfig/files/{name}", () => {
  it("removes one uploaded file and keeps the others", async () => {
    await putConfig({ "a.yaml": yamlFile("one-a"), "b.yaml": yamlFile("one-b") });
    const removed = await deleteFile("a.yaml");
    expect(removed.status).toBe(200);
    expect(await removed.json()).toEqual({ domains: ["one-b", "example"], uploaded: ["b.yaml"] });
    expect(await limitOf("one-a", "k", "x")).toBeUndefined();
    expect(await limitOf("one-b", "k", "x")).toEqual({ requestsPerUnit: 5, unit: "MINUTE" });
    expect(await storedNames()).toEqual(["b.yaml"]);
  });

  it("answers 404 for a name nothing has, and 409 for a bundled file", async () => {
    await putConfig({ "a.yaml": yamlFile("one-a") });
    expect(await answerOf(await deleteFile("missing.yaml"))).toEqual({
      status: 404,
      body: "no uploaded file named missing.yaml",
    });
    expect(await answerOf(await deleteFile("example.yaml"))).toEqual({
      status: 409,
      body:
        "example.yaml is a bundled file, not an uploaded one: upload a file of that name to replace it, " +
        "or remove it from config/ and deploy again to drop it",
    });
    expect(await inForce()).toEqual({ uploaded: { "a.yaml": yamlFile("one-a") }, domains: ["one-a", "example"] });
  });

  it("refuses a removal that would leave a set that does not load, and keeps the set in force", async () => {
    await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
    // example.yaml uploaded under another domain lets mine.yaml take "example"; removing it would bring the bundled
    // example.yaml back, a second file of domain "example".
    expect((await putConfig({ "example.yaml": yamlFile("renamed"), "mine.yaml": yamlFile("example") })).status).toBe(
      200,
    );
    expect(await answerOf(await deleteFile("example.yaml"))).toEqual({
      status: 400,
      body: "mine.yaml: duplicate domain 'example' in config file",
    });
    expect(await storedNames()).toEqual(["example.yaml", "mine.yaml"]);
    expect(await limitOf("example", "k", "x")).toEqual({ requestsPerUnit: 5, unit: "MINUTE" });
  });
});

describe("the OpenAPI examples", () => {
  it("upload and remove the example file", async () => {
    await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
    // The examples as the served document shows them (and Swagger UI fills them in).
    type Operation = {
      parameters: { name: string; example?: string }[];
      requestBody?: { content: Record<string, { example: string }> };
    };
    const document = (await (await call("/openapi.json")).json()) as {
      paths: Record<string, { put: Operation; delete: Operation }>;
    };
    const path = document.paths["/rlconfig/files/{name}"];
    const [name, deleted] = [path.put, path.delete].map(
      ({ parameters }) => parameters.find((parameter) => parameter.name === "name")!.example!,
    );
    expect(deleted).toBe(name);
    expect(name).toBe("uploaded-example.yaml");
    const content = path.put.requestBody!.content;
    for (const [type, { example }] of Object.entries(content)) {
      const put = await putFile(name, example, type);
      expect({ type, status: put.status }).toEqual({ type, status: 200 });
    }
    expect(await (await deleteFile(name)).json()).toEqual({ domains: ["example"], uploaded: [] });
  });
});
