// The proxy API's OpenAPI vocabulary: response shapes, the error responses routes pick from, path parameters, the
// Basic-auth security requirement and the body limit every route with a JSON body passes to register().
import { z } from "../../shared/zod";
import { json, text, type RegisterOptions } from "../../shared/http/openapi";
import { REALM } from "../errors";
import { proxySettings } from "../settings";
import { requireAdmin, requireBasicAuth, requireMaster } from "./auth";
import { PATH_EXAMPLES } from "./examples";
import { MessageResult } from "./schemas";

export { json, text };
export const errorResponse = (description: string) => json(MessageResult, description);
const errors = {
  400: errorResponse("the body is not JSON or fails the schema (the payload names the field)"),
  401: {
    ...errorResponse("credentials missing or invalid"),
    headers: { "WWW-Authenticate": { description: REALM, schema: { type: "string" as const } } },
  },
  403: errorResponse(
    "a quota (PROXY_MAX_*_PER_PROJECT) or a bound of the installation (PROXY_MAX_INSTALLATION_*) would be exceeded; " +
      "nothing was changed",
  ),
  404: errorResponse("project or backend not existing or access denied"),
  405: errorResponse("writes are refused on a slave instance"),
  409: errorResponse("the address is another container's or a host's, or the domain name is another project's"),
  412: {
    ...errorResponse("If-Match names no current ETag of the project (or `*` and no such project); nothing changed"),
    headers: { ETag: { description: "the project's current ETag", schema: { type: "string" as const } } },
  },
  413: errorResponse("the body is larger than PROXY_MAX_BODY_BYTES"),
  423: errorResponse("the job (or the job sharing its lock) is already running"),
  500: errorResponse("the change could not be processed; nothing was written"),
};
/** The error responses of a route, by status. */
export const pick = <K extends keyof typeof errors>(...codes: K[]) =>
  Object.fromEntries(codes.map((code) => [code, errors[code]]));
export const adminErrors = { 403: errorResponse("not the administrator") };
/** A path parameter with the example Swagger UI's "Try it out" fills in (examples.ts). */
const pathParam = (example: string | undefined) =>
  example === undefined ? z.string() : z.string().openapi({ example, param: { example } });
/** Path parameters, all strings (labels, names, numbers checked by the handler), each with its example by name. */
export const labelParams = (...names: string[]) =>
  z.object(Object.fromEntries(names.map((name) => [name, pathParam(PATH_EXAMPLES[name])])));
/** One path parameter whose name alone does not say what it holds (`name`), with its example. */
export const namedParam = (name: string, example: string) => z.object({ [name]: pathParam(example) });
/** Said of every JSON body: what becomes of fields the schema does not name (src/shared/http/unknown-fields.ts). */
const UNKNOWN_FIELDS_NOTE =
  "Fields the schema does not name are ignored, as in the original, and the answer's `warnings` names each one " +
  '(`unknown field "domainForwardings.0.sslEnabled" ignored`, at most 10, then `... and N more unknown fields ' +
  "ignored`): added to the answer's list of warnings, or as a `warnings` field of the resource it answers.";
/** A JSON request body with the example Swagger UI pre-fills (examples.ts). */
export const jsonBody = <S extends z.ZodType>(schema: S, example?: z.input<S>) => ({
  required: true,
  description: UNKNOWN_FIELDS_NOTE,
  content: { "application/json": { schema, ...(example !== undefined && { example }) } },
});

/** Every route but the availability check and the ACME challenge answers asks for HTTP Basic credentials. */
export const basicAuth = [{ user_auth: [] }];

/** Reading routes of the administrator, on either instance. */
export const reading = { security: basicAuth, middleware: [requireBasicAuth, requireAdmin] };
/** Routes that change something, for the administrator, on the master instance (a slave answers 405). */
export const writing = { security: basicAuth, middleware: [requireBasicAuth, requireAdmin, requireMaster] };

/** JSON bodies are read whatever their Content-Type says, up to PROXY_MAX_BODY_BYTES. */
export const withBodyLimit: RegisterOptions = {
  bodyLimit: (env) => ({ maxBytes: proxySettings(env).PROXY_MAX_BODY_BYTES, setting: "PROXY_MAX_BODY_BYTES" }),
};
