// The administrator's lists of stored versions and certificates read only what they show: a version's accounts and
// file (up to 2 MB each) or a certificate's PEMs, private key included, never leave D1 to make a summary.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../../src/app";
import { ADMIN_AUTH } from "../../support/worker-http";

/** env.DB, recording the SQL of every statement prepared. */
function recordingDatabase(queries: string[]): D1Database {
  return new Proxy(env.DB, {
    get(target, property) {
      if (property === "prepare") {
        return (query: string) => {
          queries.push(query);
          return target.prepare(query);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("the administrator's summaries", () => {
  it.each([
    ["/admin/certificates", ["certificate_pem", "private_key_pem"]],
    ["/admin/haproxy/versions", ["certificate_files", "problems", "notes"]],
    ["/admin/sshproxy/versions", ["accounts", "yaml", "warnings"]],
  ])("GET %s answers 200 reading none of %j", async (path, columns) => {
    const queries: string[] = [];
    const response = await app.request(
      path,
      { headers: { Authorization: ADMIN_AUTH } },
      { ...env, DB: recordingDatabase(queries) },
    );
    expect(response.status).toBe(200);
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.filter((query) => columns.some((column) => query.includes(`"${column}"`)))).toEqual([]);
  });
});
