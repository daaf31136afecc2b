// PUT and DELETE /rlconfig/files/{name}: one uploaded YAML file at a time, the other files kept. The set is validated
// as a whole, as PUT /rlconfig/files validates it, and a refused change writes nothing: the set in force stays.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "../../shared/zod";
import type { Context } from "hono";
import { database } from "../../shared/db";
import { HttpError } from "../../shared/http/errors";
import { register, text } from "../../shared/http/openapi";
import { readBodyText, requireMediaType, UnsupportedMediaType } from "../../shared/http/request-body";
import { deleteUpload, putUpload } from "../config/uploads";
import type { LoadedConfig } from "../config/provider";
import { configLoadSettings } from "../settings";
import { flushAfter } from "../stats/telemetry";
import { adminErrors, adminSecurity, requireAdminToken } from "./auth";

type RateLimitEnv = { Bindings: Env };

/** The names PUT /rlconfig/files takes: no slashes, backslashes or white space, ending in .yaml. */
export const FILE_NAME = /^[^/\\\s]+\.yaml$/;
/** A file's name is stored beside its text in one D1 row, and shown in every message about it. */
export const MAX_FILE_NAME_LENGTH = 255;
/** A name in the path: letters, digits, `.`, `_` and `-`, not starting with a dot, ending in .yaml. */
const PATH_FILE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*\.yaml$/;
const NAME_RULE =
  `a file name is 6 to ${MAX_FILE_NAME_LENGTH} characters: letters, digits, '.', '_' and '-', ` +
  "not starting with '.', ending in .yaml";

/** The media types a YAML file may be sent as (curl's -d without -H sends form encoding, which is refused). */
export const YAML_TYPES = ["application/yaml", "application/x-yaml", "text/yaml", "text/plain"];

const EXAMPLE_NAME = "uploaded-example.yaml";
// No final newline: Swagger UI's text area drops one, and then would show other than the document holds.
export const EXAMPLE_YAML =
  "domain: uploaded-example\ndescriptors:\n  - key: user\n    rate_limit:\n      unit: minute\n      requests_per_unit: 3";

export const NameParams = z.object({
  name: z
    .string()
    .meta({ description: NAME_RULE, example: EXAMPLE_NAME })
    .openapi({ param: { example: EXAMPLE_NAME } }),
});

const Answer = z.object({
  domains: z.array(z.string()).describe("The domains of the set now in force"),
  uploaded: z.array(z.string()).describe("The names of the uploaded files now in force, over the bundled ones"),
});

const answers = {
  200: { description: "The set is stored and in force", content: { "application/json": { schema: Answer } } },
  400: text("The name breaks the rule, or the set would not load (the text names the file and the problem)"),
};
const raced = "The files changed between this request's read and its write (nothing written: send it again)";

/**
 * The one YAML file PUT /rlconfig/files/{name} and its dry run take. Documented only: readConfigFileRequest reads it,
 * within RATELIMIT_CONFIG_MAX_BODY_BYTES.
 */
export const yamlFileBody = {
  required: true,
  content: Object.fromEntries(
    YAML_TYPES.map((type) => [type, { schema: { type: "string" as const }, example: EXAMPLE_YAML }]),
  ),
};

/** The refusals of that body, before it is read as YAML. */
export const yamlFileRefusals = {
  413: text("The body is larger than RATELIMIT_CONFIG_MAX_BODY_BYTES"),
  415: text("The Content-Type is not a YAML or plain text type"),
};

export const putConfigFileRoute = createRoute({
  method: "put",
  path: "/rlconfig/files/{name}",
  operationId: "putRateLimitConfigFile",
  tags: ["ratelimit"],
  summary: "Upload one YAML file: adds it to the set in force, or replaces the file of its name",
  description:
    "The other files are kept. A file named like a bundled file (config/) replaces it; DELETE brings the bundled one " +
    "back. The whole set is validated first: a refused file writes nothing.",
  security: adminSecurity,
  middleware: [requireAdminToken],
  request: {
    params: NameParams,
    body: yamlFileBody,
  },
  responses: {
    ...answers,
    409: text(raced),
    ...yamlFileRefusals,
    ...adminErrors,
  },
});

export const deleteConfigFileRoute = createRoute({
  method: "delete",
  path: "/rlconfig/files/{name}",
  operationId: "deleteRateLimitConfigFile",
  tags: ["ratelimit"],
  summary: "Remove one uploaded file; a bundled file of that name is in force again",
  description: "A name only the bundled set has is refused with 409: bundled files change with config/ and a deploy.",
  security: adminSecurity,
  middleware: [requireAdminToken],
  request: { params: NameParams },
  responses: {
    ...answers,
    409: text(`${raced}, or the name is a bundled file's, not an uploaded one`),
    ...adminErrors,
    404: text("No uploaded file has that name (or no RATELIMIT_ADMIN_TOKEN is configured)"),
  },
});

/** The name in the path, checked against the rule before anything is read. */
export function fileNameOf(c: Context<RateLimitEnv>): string {
  const name = c.req.param("name") ?? "";
  if (name.length > MAX_FILE_NAME_LENGTH || !PATH_FILE_NAME.test(name)) {
    throw new HttpError(400, `${name.length > 40 ? `${name.slice(0, 32)}...` : name}: ${NAME_RULE}`);
  }
  return name;
}

const answer = (c: Context<RateLimitEnv>, loaded: LoadedConfig) =>
  c.json({ domains: loaded.config?.domains ?? [], uploaded: loaded.uploaded.map((file) => file.name) });

/** Refuses a body of another media type, saying how to send the file as it is. */
export function requireYamlType(request: Request): void {
  try {
    requireMediaType(request, YAML_TYPES);
  } catch (error) {
    if (!(error instanceof UnsupportedMediaType)) throw error;
    const sent = error.type === "" ? "missing" : `'${error.type}'`;
    throw new HttpError(
      415,
      `Content-Type must be one of ${YAML_TYPES.join(", ")} (the YAML file as it is), this request's is ${sent}; ` +
        "with curl: -H 'Content-Type: application/yaml' --data-binary @file.yaml",
    );
  }
}

/**
 * The one-file request of PUT and its dry run: the name in the path, then the media type, then the body within
 * RATELIMIT_CONFIG_MAX_BODY_BYTES, each refused before the next is looked at.
 */
export async function readConfigFileRequest(c: Context<RateLimitEnv>) {
  const name = fileNameOf(c);
  requireYamlType(c.req.raw);
  const settings = configLoadSettings(c.env);
  const limit = {
    maxBytes: settings.service.RATELIMIT_CONFIG_MAX_BODY_BYTES,
    setting: "RATELIMIT_CONFIG_MAX_BODY_BYTES",
  };
  const text = await readBodyText(c.req.raw, limit);
  return { settings, file: { name, text } };
}

async function putConfigFile(c: Context<RateLimitEnv>) {
  const { settings, file } = await readConfigFileRequest(c);
  try {
    return answer(c, await putUpload(database(c.env.DB), settings, file, Date.now()));
  } finally {
    flushAfter(c);
  }
}

async function deleteConfigFile(c: Context<RateLimitEnv>) {
  const name = fileNameOf(c);
  try {
    return answer(c, await deleteUpload(database(c.env.DB), configLoadSettings(c.env), name, Date.now()));
  } finally {
    flushAfter(c);
  }
}

export function registerConfigFileRoutes(app: OpenAPIHono<RateLimitEnv>): void {
  register(app, putConfigFileRoute, putConfigFile);
  register(app, deleteConfigFileRoute, deleteConfigFile);
}
