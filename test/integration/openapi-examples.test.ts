// Every request body example of docs/openapi.json, sent as Swagger UI's "Try it out" sends it to a fresh `npm start`:
// a real `wrangler dev` with the local values of .dev.vars.example, path parameters from their examples, credentials
// from each operation's security, the JSON example (or a text one, YAML) with its media type. Each answers 2xx, in
// the declared order.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root } from "../support/processes.mjs";
import { refreshProxyConnection, startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";
import { basicAuth } from "../support/proxy-haproxy-agent";

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: string;
  schema?: { example?: string };
}
interface Operation {
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { example?: unknown }> };
}
interface Document {
  info: { description: string };
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, Operation>>;
}

const document: Document = JSON.parse(readFileSync(path.join(root, "docs", "openapi.json"), "utf8"));
const vars = parseEnv(readFileSync(path.join(root, ".dev.vars.example"), "utf8")) as Record<string, string>;

/**
 * Each service's operations with a body, in the order their examples build on one another: the project before its
 * host's container, the container before the backend that serves it, the user before the routes of their token.
 */
const ORDER = {
  proxy: [
    "POST /admin/projects",
    "POST /admin/hosts",
    "POST /containers/{projectLabel}",
    "POST /backends/{projectLabel}",
    "PUT /admin/certificates/{name}",
    "POST /domains/massupdate",
    "PUT /admin/zones/{name}",
    "POST /admin/apiusers",
    "POST /admin/users",
    "PUT /admin/containers/{projectLabel}/{containerLabel}/permissions",
  ],
  news: ["POST /users", "PUT /users/{id}", "POST /news", "PUT /news/{id}", "PUT /users/{id}/password"],
  ratelimit: [
    "POST /json",
    "PUT /rlconfig/files",
    "PUT /rlconfig/files/{name}",
    "POST /rlconfig/validate",
    "POST /rlconfig/validate/{name}",
    "POST /envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
  ],
};

/** What the answers so far gave: the news user's token (made at sign-up, so no example can name it). */
interface Answers {
  newsToken?: string;
}

/** Keeps what later steps need from an answer. */
function remember(step: string, text: string, answers: Answers) {
  if (step === "POST /users") {
    answers.newsToken = JSON.parse(text).token;
  }
}

const operationOf = (step: string): Operation => {
  const [method, pathName] = step.split(" ");
  return document.paths[pathName][method.toLowerCase()];
};
const jsonExample = (step: string) => operationOf(step).requestBody?.content["application/json"]?.example;

/** The media type Try it out shows first and its example: the JSON one where there is one (bodies in YAML too). */
function bodyExample(step: string): { mediaType: string; example: unknown } {
  const content = operationOf(step).requestBody?.content ?? {};
  const mediaType = "application/json" in content ? "application/json" : Object.keys(content)[0];
  return { mediaType, example: content[mediaType]?.example };
}

/** The Authorization header of the operation's first security requirement, with the local values. */
function authorization(step: string, answers: Answers): string | undefined {
  const [requirement = {}] = operationOf(step).security ?? document.security ?? [];
  const schemes = Object.keys(requirement);
  if (schemes.length === 0) return undefined;
  expect(schemes, `${step}: one scheme per requirement`).toHaveLength(1);
  const signUp = jsonExample("POST /users") as { email: string; password: string };
  const credentials: Record<string, () => string | undefined> = {
    user_auth: () => basicAuth(vars.PROXY_ADMIN_USERNAME, vars.PROXY_ADMIN_PASSWORD),
    news_master_key: () => `Bearer ${vars.MASTER_KEY}`,
    news_token: () => answers.newsToken && `Bearer ${answers.newsToken}`,
    news_login: () => basicAuth(signUp.email, signUp.password),
    ratelimitAdminToken: () => `Bearer ${vars.RATELIMIT_ADMIN_TOKEN}`,
  };
  const value = credentials[schemes[0]]?.();
  if (value === undefined) throw new Error(`${step}: no credentials for ${schemes[0]}`);
  return value;
}

/** The path with each parameter from its example; no other required parameter. */
function concretePath(step: string): string {
  const pathName = step.split(" ")[1];
  const parameters = operationOf(step).parameters ?? [];
  const unfilled = parameters.filter((parameter) => parameter.required && parameter.in !== "path");
  expect(unfilled.map((parameter) => parameter.name)).toEqual([]);
  return pathName.replaceAll(/\{([^}]+)\}/g, (_, name: string) => {
    const parameter = parameters.find((candidate) => candidate.in === "path" && candidate.name === name);
    const value = parameter?.example ?? parameter?.schema?.example;
    if (value === undefined) throw new Error(`${step}: the path parameter ${name} has no example`);
    return encodeURIComponent(value);
  });
}

/** Sends the operation's example; the answer must be 2xx (the failure shows the body). */
async function send(step: string, answers: Answers) {
  const { mediaType, example } = bodyExample(step);
  expect(example, `${step}: the ${mediaType} body has no example`).toBeDefined();
  const auth = authorization(step, answers);
  const response = await fetch(`${server.url}${concretePath(step)}`, {
    method: step.split(" ")[0],
    headers: { "content-type": mediaType, ...(auth && { authorization: auth }) },
    body: typeof example === "string" ? example : JSON.stringify(example),
  });
  const text = await response.text();
  expect(response.ok, `${step} answered ${response.status}: ${text}`).toBe(true);
  remember(step, text, answers);
}

/** Writes without a body whose path examples name what a service's steps built, sent after those steps. */
const AFTER_BODIES: Partial<Record<keyof typeof ORDER, string[]>> = {
  proxy: ["PATCH /backends/{projectLabel}/{backendLabel}/setContainersOf/{targetBackendLabel}"],
};

/** Sends a body-less operation with its path examples; the answer must be 2xx. */
async function sendPathOnly(step: string, answers: Answers) {
  const auth = authorization(step, answers);
  const response = await fetch(`${server.url}${concretePath(step)}`, {
    method: step.split(" ")[0],
    headers: auth ? { authorization: auth } : {},
  });
  const text = await response.text();
  expect(response.ok, `${step} answered ${response.status}: ${text}`).toBe(true);
}

let server: DevServer;

beforeAll(async () => {
  server = await startWranglerDev(vars, { name: "openapi examples" });
});

afterAll(async () => {
  await server?.stop();
});

describe("the request body examples of docs/openapi.json", () => {
  it("are declared in the order, every operation with a body once, as the document's description lists them", () => {
    const withBody = Object.entries(document.paths).flatMap(([pathName, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => operation.requestBody)
        .map(([method]) => `${method.toUpperCase()} ${pathName}`),
    );
    const ordered = Object.values(ORDER).flat();
    expect([...ordered].sort()).toEqual([...withBody].sort());
    const listed = [...document.info.description.matchAll(/^\d+\. `([A-Z]+ \S+)`$/gm)].map((match) => match[1]);
    expect(listed).toEqual(ordered);
  });

  for (const [service, steps] of Object.entries(ORDER)) {
    it(`of the ${service} answer 2xx in order on a fresh installation`, async () => {
      await refreshProxyConnection(server);
      const answers: Answers = {};
      for (const step of steps) await send(step, answers);
      // A write without a body, on what the steps built: its path examples alone must work too.
      for (const step of AFTER_BODIES[service as keyof typeof ORDER] ?? []) await sendPathOnly(step, answers);
    });
  }
});
