// POST /rlconfig/validate and /rlconfig/validate/{name}: the PUT routes' dry run. Each takes its PUT's body, loads the
// set that PUT would put in force with the same loader, and answers what would load or the very 400 the PUT would
// give; nothing is written, installed or counted, so the rules in force keep answering.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "../../shared/zod";
import type { Context } from "hono";
import { database } from "../../shared/db";
import { HttpError } from "../../shared/http/errors";
import { register, text } from "../../shared/http/openapi";
import { validateUpload, validateUploads } from "../config/uploads";
import { configLoadSettings } from "../settings";
import { adminErrors, adminSecurity, requireAdminToken } from "./auth";
import { configFilesExample } from "./examples";
import { configBodyOf, configFilesBodySchema, configFilesOf } from "./rlconfig";
import { NameParams, readConfigFileRequest, yamlFileBody, yamlFileRefusals } from "./rlconfig-file";

type RateLimitEnv = { Bindings: Env };

const Verdict = z.object({
  domains: z.array(z.string()).describe("The domains the set would have"),
  rules: z.number().int().describe("How many rules (descriptors with a rate_limit) the set would have"),
});
const verdict = {
  200: { description: "The set would load; nothing was changed", content: { "application/json": { schema: Verdict } } },
};

// The body is read here, as PUT /rlconfig/files reads it, so it is documented only.
export const validateConfigFilesRoute = createRoute({
  method: "post",
  path: "/rlconfig/validate",
  operationId: "validateRateLimitConfigFiles",
  tags: ["ratelimit"],
  summary: "Check what PUT /rlconfig/files would load, changing nothing",
  description:
    "Takes PUT /rlconfig/files's body (YAML files by name, or an xDS snapshot) and answers what would load over the " +
    "bundled set, or the 400 the PUT would give.",
  security: adminSecurity,
  middleware: [requireAdminToken],
  request: {
    body: { content: { "application/json": { schema: configFilesBodySchema, example: configFilesExample } } },
  },
  responses: {
    ...verdict,
    400: text("The set cannot be read or would not load: the PUT's own message"),
    413: text("The body is larger than RATELIMIT_CONFIG_MAX_BODY_BYTES"),
    ...adminErrors,
  },
});

export const validateConfigFileRoute = createRoute({
  method: "post",
  path: "/rlconfig/validate/{name}",
  operationId: "validateRateLimitConfigFile",
  tags: ["ratelimit"],
  summary: "Check what PUT /rlconfig/files/{name} would load, changing nothing",
  security: adminSecurity,
  middleware: [requireAdminToken],
  request: {
    params: NameParams,
    body: yamlFileBody,
  },
  responses: {
    ...verdict,
    400: text("The name breaks the rule, or the set would not load: the PUT's own message"),
    ...yamlFileRefusals,
    ...adminErrors,
  },
});

async function validateFiles(c: Context<RateLimitEnv>) {
  const settings = configLoadSettings(c.env);
  const read = await configBodyOf(c.req.raw, settings.service);
  if (!read.ok) throw read.error;
  const described = configFilesOf(read.value, settings.service);
  if (!described.ok) throw new HttpError(400, described.error.message);
  return c.json(validateUploads(settings, described.value));
}

async function validateFile(c: Context<RateLimitEnv>) {
  const { settings, file } = await readConfigFileRequest(c);
  return c.json(await validateUpload(database(c.env.DB), settings, file));
}

export function registerValidateRoutes(app: OpenAPIHono<RateLimitEnv>): void {
  register(app, validateConfigFilesRoute, validateFiles);
  register(app, validateConfigFileRoute, validateFile);
}
