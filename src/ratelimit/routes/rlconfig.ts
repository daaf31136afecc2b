// The configuration routes: /rlconfig (the reference's dump of the config in force) and /rlconfig/files (the files in
// force; PUT replaces the uploaded files, laid over the bundled ones, with YAML files or an xDS snapshot; DELETE drops
// every uploaded file). One file at a time: rlconfig-file.ts.
import { createRoute, type OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import { z } from "../../shared/zod";
import type { Context } from "hono";
import { database } from "../../shared/db";
import { HttpError, InvalidJsonBody } from "../../shared/http/errors";
import { register, text } from "../../shared/http/openapi";
import { InvalidUtf8, JsonTooDeep, PayloadTooLarge, readJsonBodyWithin } from "../../shared/http/request-body";
import { describeZodError } from "../../shared/http/validate";
import { err, ok, type Result } from "../../shared/result";
import { currentConfig } from "../config/provider";
import { clearUploads, replaceUploads } from "../config/uploads";
import { xdsConfigsToFiles } from "../config/xds";
import { dumpConfig, type ConfigFile } from "../core/config";
import { limitText, tooDeep } from "../core/limits";
import { configLimits, configLoadSettings, type RateLimitSettings } from "../settings";
import { flushAfter, recordConfigLoad } from "../stats/telemetry";
import { adminErrors, adminSecurity, requireAdminToken } from "./auth";
import { configFilesExample } from "./examples";
import { FILE_NAME, MAX_FILE_NAME_LENGTH, registerConfigFileRoutes } from "./rlconfig-file";

type RateLimitEnv = { Bindings: Env };

const ConfigFilesBody = z.strictObject({ files: z.record(z.string(), z.string()) });
const XdsConfigsBody = z.strictObject({ configs: z.array(z.unknown()) });
const ConfigSet = z.object({
  source: z.enum(["bundled", "runtime"]),
  version: z.number().int(),
  domains: z.array(z.string()),
  files: z.record(z.string(), z.string()),
  uploaded: z.array(z.string()).describe("The names of the uploaded files among `files` (the rest are bundled)"),
});

export const dumpConfigRoute = createRoute({
  method: "get",
  path: "/rlconfig",
  operationId: "dumpRateLimitConfig",
  tags: ["ratelimit"],
  summary: "The configuration in force, one line per rule (the reference's /rlconfig)",
  security: adminSecurity,
  middleware: [requireAdminToken],
  responses: { 200: text("The dump"), ...adminErrors },
});

export const getConfigFilesRoute = createRoute({
  method: "get",
  path: "/rlconfig/files",
  operationId: "getRateLimitConfigFiles",
  tags: ["ratelimit"],
  summary: "The configuration files in force, their source and version",
  security: adminSecurity,
  middleware: [requireAdminToken],
  responses: {
    200: { description: "The set in force", content: { "application/json": { schema: ConfigSet } } },
    ...adminErrors,
  },
});

type MediaType = NonNullable<NonNullable<RouteConfig["request"]>["body"]>["content"][string];
type DocumentedSchema = Extract<MediaType, { schema?: unknown }>["schema"];

/** The body of PUT /rlconfig/files (and of its dry run, POST /rlconfig/validate), as documented. */
export const configFilesBodySchema: DocumentedSchema = {
  oneOf: [
    {
      type: "object",
      description: "YAML files by name (*.yaml, no slashes or spaces)",
      properties: { files: { type: "object", additionalProperties: { type: "string" } } },
      required: ["files"],
      additionalProperties: false,
    },
    {
      type: "object",
      description: "The RateLimitConfig resources of an xDS snapshot, in proto3 JSON",
      properties: { configs: { type: "array", items: { type: "object" } } },
      required: ["configs"],
      additionalProperties: false,
    },
  ],
};

// The body is read here, within RATELIMIT_CONFIG_MAX_BODY_BYTES and the nesting limit, so it is documented only.
export const putConfigFilesRoute = createRoute({
  method: "put",
  path: "/rlconfig/files",
  operationId: "putRateLimitConfigFiles",
  tags: ["ratelimit"],
  summary: "Replace the uploaded files: YAML files by name, or the RateLimitConfig resources of an xDS snapshot",
  description:
    "The uploaded files are laid over the bundled ones (config/): a file of a bundled file's name replaces it, the " +
    "others add to the bundled set. This replaces every uploaded file; PUT /rlconfig/files/{name} changes one.",
  security: adminSecurity,
  middleware: [requireAdminToken],
  request: {
    body: {
      content: {
        "application/json": {
          schema: configFilesBodySchema,
          example: configFilesExample,
        },
      },
    },
  },
  responses: {
    200: {
      description: "The set is stored and in force",
      content: { "application/json": { schema: z.object({ domains: z.array(z.string()) }) } },
    },
    400: text("The set cannot be read or does not load; the text names the problem"),
    413: text("The body is larger than RATELIMIT_CONFIG_MAX_BODY_BYTES"),
    ...adminErrors,
  },
});

export const deleteConfigFilesRoute = createRoute({
  method: "delete",
  path: "/rlconfig/files",
  operationId: "deleteRateLimitConfigFiles",
  tags: ["ratelimit"],
  summary: "Drop every uploaded file: the bundled files alone are in force again",
  security: adminSecurity,
  middleware: [requireAdminToken],
  responses: {
    200: {
      description: "The bundled set is in force",
      content: {
        "application/json": { schema: z.object({ source: z.literal("bundled"), domains: z.array(z.string()) }) },
      },
    },
    ...adminErrors,
  },
});

/** A refusal of the set; `xds` marks a snapshot, whose refusal counts as a failed load. */
type Described = Result<ConfigFile[], { message: string; xds?: true }>;

/** Appended to a refusal of the body's shape: what the route takes, and where a lone YAML file goes. */
const EXPECTED_SHAPE =
  'request body must be JSON {"files": {"<name>.yaml": "<YAML text>"}} (or an xDS snapshot {"configs": [...]}); ' +
  "to upload one YAML file as it is, use PUT /rlconfig/files/{name}";
const shapeError = (problem: string) => `${problem}; ${EXPECTED_SHAPE}`;

const longName = (files: ConfigFile[]) => files.find((file) => file.name.length > MAX_FILE_NAME_LENGTH)?.name;
const longNameError = (name: string) =>
  `${name.slice(0, 32)}...: a file name is at most ${MAX_FILE_NAME_LENGTH} characters long`;

/**
 * The set a PUT body describes: YAML files by name, or the RateLimitConfig resources of an xDS snapshot. The number of
 * files is checked before any is read.
 */
export function configFilesOf(body: unknown, settings: RateLimitSettings): Described {
  const maxFiles = { max: settings.RATELIMIT_CONFIG_MAX_FILES, setting: "RATELIMIT_CONFIG_MAX_FILES" };
  const tooMany = (count: number) => `the set has ${count} files, more than ${limitText(maxFiles)}`;
  if (typeof body === "object" && body !== null && "configs" in body) {
    const parsed = XdsConfigsBody.safeParse(body);
    if (!parsed.success) return err({ message: shapeError(describeZodError(parsed.error)) });
    const { configs } = parsed.data;
    if (configs.length > maxFiles.max) return err({ message: tooMany(configs.length), xds: true });
    const files = xdsConfigsToFiles(configs, configLimits(settings));
    if (!files.ok) return err({ message: files.error, xds: true });
    const tooLong = longName(files.value);
    if (tooLong !== undefined) return err({ message: longNameError(tooLong), xds: true });
    return ok(files.value);
  }
  const parsed = ConfigFilesBody.safeParse(body);
  if (!parsed.success) return err({ message: shapeError(describeZodError(parsed.error)) });
  const files = Object.entries(parsed.data.files).map(([name, text]) => ({ name, text }));
  if (files.length > maxFiles.max) return err({ message: tooMany(files.length) });
  const tooLong = longName(files);
  if (tooLong !== undefined) return err({ message: longNameError(tooLong) });
  const badName = files.find((file) => !FILE_NAME.test(file.name))?.name;
  if (badName !== undefined) {
    return err({ message: `${badName}: file names must end in .yaml and contain no slashes or spaces` });
  }
  return ok(files.sort((a, b) => (a.name < b.name ? -1 : 1)));
}

type ConfigBody = Result<unknown, HttpError>;

/** The PUT body as JSON: within RATELIMIT_CONFIG_MAX_BODY_BYTES, UTF-8, and nested no deeper than the limit. */
export async function configBodyOf(request: Request, settings: RateLimitSettings): Promise<ConfigBody> {
  const limit = { maxBytes: settings.RATELIMIT_CONFIG_MAX_BODY_BYTES, setting: "RATELIMIT_CONFIG_MAX_BODY_BYTES" };
  const { depth } = configLimits(settings);
  try {
    return ok(await readJsonBodyWithin(request, limit, depth.max));
  } catch (error) {
    if (error instanceof PayloadTooLarge) return err(new HttpError(413, error.message));
    if (error instanceof InvalidUtf8) return err(new HttpError(400, error.message));
    if (error instanceof JsonTooDeep) return err(new HttpError(400, tooDeep("request body", depth)));
    if (error instanceof InvalidJsonBody) return err(new HttpError(400, shapeError(error.message)));
    throw error;
  }
}

async function dump(c: Context<RateLimitEnv>) {
  const loaded = await currentConfig(database(c.env.DB), configLoadSettings(c.env), Date.now());
  return c.text(loaded.config ? dumpConfig(loaded.config) : "");
}

async function getConfigFiles(c: Context<RateLimitEnv>) {
  const loaded = await currentConfig(database(c.env.DB), configLoadSettings(c.env), Date.now());
  return c.json({
    source: loaded.source,
    version: loaded.version,
    domains: loaded.config?.domains ?? [],
    files: Object.fromEntries(loaded.files.map((file) => [file.name, file.text])),
    uploaded: loaded.uploaded.map((file) => file.name),
  });
}

// Refusals are HttpErrors, so they answer text/plain like every other error of the service (the xDS client in
// grpc-gateway/ takes the text as the NACK's message).
async function putConfigFiles(c: Context<RateLimitEnv>) {
  const settings = configLoadSettings(c.env);
  const read = await configBodyOf(c.req.raw, settings.service);
  if (!read.ok) throw read.error;
  const described = configFilesOf(read.value, settings.service);
  if (!described.ok) {
    // A snapshot whose resources cannot be read is a failed load, as the reference counts it.
    if (described.error.xds) {
      recordConfigLoad(settings.service, false);
      flushAfter(c);
    }
    throw new HttpError(400, described.error.message);
  }
  try {
    const loaded = await replaceUploads(database(c.env.DB), settings, described.value, Date.now());
    return c.json({ domains: loaded.config?.domains ?? [] });
  } finally {
    flushAfter(c);
  }
}

async function deleteConfigFiles(c: Context<RateLimitEnv>) {
  const loaded = await clearUploads(database(c.env.DB), configLoadSettings(c.env), Date.now());
  flushAfter(c);
  return c.json({ source: "bundled", domains: loaded.config?.domains ?? [] });
}

export function registerConfigRoutes(app: OpenAPIHono<RateLimitEnv>): void {
  register(app, dumpConfigRoute, dump);
  register(app, getConfigFilesRoute, getConfigFiles);
  register(app, putConfigFilesRoute, putConfigFiles);
  register(app, deleteConfigFilesRoute, deleteConfigFiles);
  registerConfigFileRoutes(app);
}
