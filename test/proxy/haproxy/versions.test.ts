// The stored HAProxy versions' repository in the Workers runtime with D1: what activating a version keeps. Versions
// beyond HAPROXY_VERSIONS_KEPT go once they are settled, never while their outcome is still to be learnt.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createJobRun } from "../../../src/jobs/history";
import { activateVersion, markVersionUnknown, rejectVersion, storeVersion } from "../../../src/proxy/haproxy/versions";
import { database } from "../../../src/shared/db";

const db = () => database(env.DB);

/** A new pending version of its own run, with one file. */
async function version(): Promise<number> {
  const jobRunId = await createJobRun(db(), { kind: "gensynchaprx", trigger: "test" });
  const files = { "haproxy.cfg": `# run ${jobRunId}\n` };
  return storeVersion(db(), { digest: `sha256:${jobRunId}`, jobRunId, files, certificateFiles: [], now: new Date() });
}

/** The statuses of these versions as stored (null: gone), and how many files each kept. */
async function stored(ids: number[]) {
  return Promise.all(
    ids.map(async (id) => {
      const row = await env.DB.prepare("select status from haproxy_versions where id = ?").bind(id).first();
      const files = await env.DB.prepare("select count(*) as n from haproxy_version_files where version_id = ?")
        .bind(id)
        .first<{ n: number }>();
      return [row?.status ?? null, files!.n];
    }),
  );
}

describe("activateVersion", () => {
  it("drops settled versions beyond those kept, never one whose outcome is pending or unknown", async () => {
    const unknown = await version();
    await markVersionUnknown(db(), unknown, "the push's answer was lost");
    const pending = await version();
    const refused = await version();
    await rejectVersion(db(), refused, "refused");
    const newer = [await version(), await version(), await version()];
    for (const id of newer) expect(await activateVersion(db(), id, 2)).toBe("active");
    expect(await stored([unknown, pending, refused, ...newer])).toEqual([
      ["unknown", 1],
      ["pending", 1],
      [null, 0],
      [null, 0],
      ["previous", 1],
      ["active", 1],
    ]);
  });
});
