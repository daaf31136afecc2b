// Every proxy operation of the served OpenAPI document, called for real: a route whose document names a security
// requirement must also check it (its `security` and its `middleware` are written apart), so without credentials it
// answers the exact 401 and challenge, and an API user whose patterns match nothing gets the exact 404 of a project it
// may not see (the original's 500 on its four writes), or the 403 of an administrator's route, and writes nothing.
import { beforeAll, describe, expect, it } from "vitest";
import {
  asAdmin,
  call,
  createApiUser,
  createBackend,
  createHost,
  errorBody,
  expectJson,
} from "../../support/proxy-api";
import { createProjectWithContainers } from "../../support/proxy-fixtures";
import { CHALLENGE, FORBIDDEN, UNAUTHENTICATED } from "./refusals-fixtures";

interface Operation {
  tags?: string[];
  security?: Record<string, string[]>[];
}

/** One operation of the document: "METHOD /path" and how it is reached. */
interface Walked {
  name: string;
  method: string;
  path: string;
  security: Record<string, string[]>[];
}

const PROJECT = "authwalk";
const OUTSIDER = "authwalk-outsider";

/** The values of the path parameters: the project, its backends and container, so a missing check would reach them. */
const PARAMS: Record<string, string> = {
  projectLabel: PROJECT,
  label: PROJECT,
  backendLabel: "green",
  targetBackendLabel: "blue",
  containerLabel: "c1",
  name: `${PROJECT}.example`,
  username: OUTSIDER,
  id: "1",
  version: "1",
  token: `${PROJECT}-token`,
};

/** Jobs any logged-in caller may start: started only without credentials here, never as a caller. */
const JOB_STARTS = ["GET /admin/gensynchaprx", "GET /admin/writesshprx", "GET /maintenance/start"];

/**
 * The writes of a tenant's project, in the document's order: a minimal valid body of each (undefined: none), and the
 * original's words for a write it could not do, which these answer with 500 (reading routes answer 404).
 */
const WRITES: Record<string, { body: unknown; refused: string }> = {
  "POST /domains/massupdate": {
    body: {
      domainOperations: [
        { operation: "CREATE", domainName: `new.${PROJECT}.example`, projectLabel: PROJECT, backendLabel: "green" },
      ],
    },
    refused: "Unable to process mass update",
  },
  "POST /containers/{projectLabel}": { body: { label: "cnew" }, refused: "Unable to process Container create/update" },
  "POST /backends/{projectLabel}": { body: { label: "bnew" }, refused: "Unable to process backend create/update" },
  "PATCH /backends/{projectLabel}/{backendLabel}/setContainersOf/{targetBackendLabel}": {
    body: undefined,
    refused: "Unable to process backend container update",
  },
};

/** The projects a tenant's routes refuse exactly as a project that does not exist. */
const invalidProject = `Invalid project: label ${PROJECT} not existing or access denied`;

let outsider: string;

beforeAll(async () => {
  await createHost(`${PROJECT}.hosts.example`, "2001:db8:a7a1::1");
  const ids = await createProjectWithContainers(PROJECT, `${PROJECT}.hosts.example`, {
    c1: "2001:db8:a7a1::11",
    c2: "2001:db8:a7a1::12",
  });
  await createBackend(PROJECT, { label: "blue", backendContainers: [{ containerId: ids.c1 }] });
  await createBackend(PROJECT, {
    label: "green",
    backendContainers: [{ containerId: ids.c2 }],
    domainForwardings: [{ domainName: `www.${PROJECT}.example` }],
  });
  outsider = await createApiUser(OUTSIDER, ["nomatch-zz"]);
});

/** The proxy's operations of the document the Worker serves (those of neither news nor ratelimit), in its order. */
async function proxyOperations(): Promise<Walked[]> {
  const document = await expectJson(call("/openapi.json"), 200);
  const paths = document.paths as Record<string, Record<string, Operation>>;
  return Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => !["news", "ratelimit"].includes(operation.tags?.[0] ?? ""))
      .map(([method, operation]) => ({
        name: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        security: operation.security ?? [],
      })),
  );
}

/** The path with its parameters filled in; a parameter without a value here fails the test, to be given one. */
const filled = (path: string) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (!(name in PARAMS)) throw new Error(`${path}: no value for the path parameter ${name}; add it to PARAMS`);
    return PARAMS[name];
  });

/** The operation's answer to `auth` (null: no credentials): status, challenge and body (JSON when it is JSON). */
async function answerOf(operation: Walked, auth: string | null) {
  const body = operation.name in WRITES ? WRITES[operation.name].body : operation.method === "GET" ? undefined : {};
  const headers: Record<string, string> = auth === null ? {} : { Authorization: auth };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await call(filled(operation.path), {
    method: operation.method,
    headers,
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const json = (response.headers.get("content-type") ?? "").startsWith("application/json");
  return {
    name: operation.name,
    status: response.status,
    challenge: response.headers.get("WWW-Authenticate"),
    body: json ? JSON.parse(text) : text,
  };
}

/** What an API user whose patterns match nothing gets; undefined for the jobs it may start (not started here). */
function outsiderExpectation(operation: Walked) {
  const { name, path } = operation;
  if (JOB_STARTS.includes(name)) return undefined;
  if (path.startsWith("/admin/")) return { name, status: 403, challenge: null, body: FORBIDDEN };
  if (name in WRITES) {
    const payload = `${WRITES[name].refused}: ${invalidProject}`;
    return { name, status: 500, challenge: null, body: errorBody(payload) };
  }
  if (path.includes("{projectLabel}")) return { name, status: 404, challenge: null, body: errorBody(invalidProject) };
  if (name === "GET /projects") return { name, status: 200, challenge: null, body: [] };
  if (name === "GET /test/authping")
    return { name, status: 200, challenge: null, body: `authpong ${OUTSIDER} from master instance` };
  throw new Error(`${name}: no expected answer for an API user matching nothing; add it to this test`);
}

/** What the administrator reads of the project: the rows a refused write must leave as they were. */
const projectAsAdmin = async () => ({
  project: await expectJson(asAdmin(`/projects/${PROJECT}`), 200),
  domains: await expectJson(asAdmin(`/domains/${PROJECT}`), 200),
});

describe("every proxy operation of the served OpenAPI document", () => {
  it("answers the exact 401 and challenge without credentials when it declares security, and no 401 otherwise", async () => {
    const operations = await proxyOperations();
    const unsecured = operations.filter((operation) => operation.security.length === 0).map(({ name }) => name);
    expect(unsecured).toEqual(["GET /test/ping", "GET /.well-known/acme-challenge/{token}"]);
    const before = await projectAsAdmin();
    const answers = [];
    const expected = [];
    for (const operation of operations) {
      const answer = await answerOf(operation, null);
      answers.push(answer);
      if (operation.security.length > 0)
        expected.push({ name: operation.name, status: 401, challenge: CHALLENGE, body: UNAUTHENTICATED });
      else expected.push({ ...answer, status: expect.not.toBeOneOf([401]) });
    }
    expect(answers).toEqual(expected);
    expect(await projectAsAdmin()).toEqual(before);
  });

  it("refuses an API user matching no project exactly: 404 on a project, 403 on the administrator's routes", async () => {
    const operations = await proxyOperations();
    const secured = operations.filter((operation) => operation.security.length > 0);
    expect(secured.filter((operation) => !outsiderExpectation(operation)).map(({ name }) => name)).toEqual(JOB_STARTS);
    expect(secured.filter(({ name }) => name in WRITES).map(({ name }) => name)).toEqual(Object.keys(WRITES));
    const before = await projectAsAdmin();
    const answers = [];
    const expected = [];
    for (const operation of secured) {
      const expectation = outsiderExpectation(operation);
      if (!expectation) continue;
      answers.push(await answerOf(operation, outsider));
      expected.push(expectation);
    }
    expect(answers).toEqual(expected);
    expect(await projectAsAdmin()).toEqual(before);
  });
});
