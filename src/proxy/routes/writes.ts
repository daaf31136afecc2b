// What the proxy's write routes share: the `dryRun` query flag, the If-Match header (parsed here, checked by the
// repositories in the write's own batch), the ETag of the answer, the audit entry of the request, and the original's
// 500 for the four writes of its spec that cannot be done.
import { z } from "../../shared/zod";
import type { Context } from "hono";
import { DomainError } from "../../shared/domain-errors";
import { HttpError } from "../../shared/http/errors";
import { parseOrThrow } from "../../shared/http/validate";
import { auditStatement, type AuditEntry } from "../audit/log";
import type { IfMatch } from "../installation/revisions";
import type { Limits } from "../installation/quotas";
import type { AuditChange, WriteControl } from "../installation/writes";
import { proxySettings, type ProxySettings } from "../settings";
import type { ProxyEnv } from "./auth";
import { errorResponse } from "./openapi";

export const DryRunQuery = z.object({
  dryRun: z
    .enum(["true", "false"])
    .optional()
    .openapi({
      description:
        "`true`: answer exactly what the write would answer (status, body, validation, an unknown label, 412) and " +
        "store nothing, nor any audit entry",
    }),
});

export const IfMatchHeader = z.object({
  "If-Match": z
    .string()
    .optional()
    .openapi({
      description:
        'the project\'s ETag from GET /projects/{label} (`"p<id>.r<revision>"`), several separated by commas, or `*` ' +
        "(the project exists): answers 412 and changes nothing unless one is the project's current ETag",
    }),
});

export const etagHeader = {
  ETag: { description: "the project's ETag after the write", schema: { type: "string" as const } },
};

/**
 * One of the original's four writes, by the message it answered a write it could not do with (spec: 500). `run` runs
 * the handler: a project, backend or host it cannot find, or a create or update it cannot process, answers 500
 * `<refused>: <cause>` (GET routes answer such a label 404); every other refusal keeps its status (400, 403, 409,
 * 412, ...). `response` is that 500 in the route's OpenAPI document.
 */
function originalWrite(refused: string) {
  return {
    response: errorResponse(
      `\`${refused}: <cause>\`, the cause naming a project, backend or host not existing or access denied (as ` +
        "the original, unlike the 404 of reading routes), or why the change could not be processed; nothing was written",
    ),
    async run<T>(write: () => Promise<T>): Promise<T> {
      try {
        return await write();
      } catch (error) {
        if (error instanceof DomainError && (error.kind === "not_found" || error.kind === "unprocessable")) {
          throw new HttpError(500, `${refused}: ${error.message}`);
        }
        throw error;
      }
    },
  };
}

export const ORIGINAL_WRITES = {
  backend: originalWrite("Unable to process backend create/update"),
  container: originalWrite("Unable to process Container create/update"),
  backendContainers: originalWrite("Unable to process backend container update"),
  // The original drops the cause here; it is kept after the colon, so a client matching the text as a prefix still does.
  massUpdate: originalWrite("Unable to process mass update"),
};

const INVALID_IF_MATCH = "If-Match: must be * or a list of entity tags";

/** An entity tag's characters (RFC 9110 etagc): visible ASCII but the double quote, and obs-text. */
const ETAG_CHARACTERS = /^[\x21\x23-\x7e\x80-\xff]*$/;

/** Reads an If-Match header (RFC 9110 section 13.1.1); undefined without one, 400 when it is not one. */
export function parseIfMatch(header: string | undefined): IfMatch | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === "*") return { any: true };
  const tags: string[] = [];
  let at = 0;
  const skipSpace = () => {
    while (header[at] === " " || header[at] === "\t") at++;
  };
  while (at < header.length) {
    skipSpace();
    // Empty list elements (",,") are allowed by the list syntax.
    if (header[at] === ",") {
      at++;
      continue;
    }
    if (at >= header.length) break;
    const start = at;
    if (header.startsWith("W/", at)) at += 2;
    if (header[at] !== '"') throw new HttpError(400, INVALID_IF_MATCH);
    const end = header.indexOf('"', at + 1);
    if (end < 0 || !ETAG_CHARACTERS.test(header.slice(at + 1, end))) throw new HttpError(400, INVALID_IF_MATCH);
    tags.push(header.slice(start, end + 1));
    at = end + 1;
    skipSpace();
    if (at < header.length && header[at] !== ",") throw new HttpError(400, INVALID_IF_MATCH);
  }
  if (tags.length === 0) throw new HttpError(400, INVALID_IF_MATCH);
  return { tags };
}

/** The audit entry of this request: who (and as what) called which method and path, and what changed. */
export function auditEntry(c: Context<ProxyEnv>, change: AuditChange & { status?: number }): AuditEntry {
  const caller = c.get("caller");
  return {
    actor: caller.username,
    role: caller.isAdmin ? "admin" : "tenant",
    method: c.req.method,
    path: c.req.path,
    status: change.status ?? 200,
    projectLabel: change.projectLabel,
    summary: change.summary,
    onlyIf: change.onlyIf,
  };
}

/** The quota settings as the repositories check them. */
function limitsOf(settings: ProxySettings): Limits {
  return {
    perProject: {
      backends: settings.PROXY_MAX_BACKENDS_PER_PROJECT,
      containers: settings.PROXY_MAX_CONTAINERS_PER_PROJECT,
      domains: settings.PROXY_MAX_DOMAINS_PER_PROJECT,
      paramsBytes: settings.PROXY_MAX_PARAMS_BYTES_PER_PROJECT,
    },
    installation: {
      backends: settings.PROXY_MAX_INSTALLATION_BACKENDS,
      servers: settings.PROXY_MAX_INSTALLATION_SERVERS,
      domains: settings.PROXY_MAX_INSTALLATION_DOMAINS,
      publicCaDomains: settings.PROXY_MAX_INSTALLATION_PUBLIC_CA_DOMAINS,
      paramsBytes: settings.PROXY_MAX_INSTALLATION_PARAMS_BYTES,
    },
  };
}

/**
 * How this request wants its write done: `dryRun` (strictly `true` or `false`), If-Match (when `preconditions`: the
 * project writes; other writes ignore it), and its audit entries.
 */
export function writeControl(c: Context<ProxyEnv>, options: { preconditions: boolean }): WriteControl {
  const { dryRun } = parseOrThrow(DryRunQuery, { dryRun: c.req.query("dryRun") });
  return {
    dryRun: dryRun === "true",
    byAdministrator: c.get("caller").isAdmin,
    limits: limitsOf(proxySettings(c.env)),
    ifMatch: options.preconditions ? parseIfMatch(c.req.header("If-Match")) : undefined,
    record: (change) => auditStatement(auditEntry(c, change)),
  };
}
