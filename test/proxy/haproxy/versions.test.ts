// The stored HAProxy versions' repository in the Workers runtime with D1: what activating a version keeps. Versions
// beyond HAPROXY_VERSIONS_KEPT go once they are settled, never while their outcome is still to be learnt.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createJobRun } from "../../../src/jobs/history";
import { combinedPem } from "../../../src/proxy/pki/selection";
import { haproxyVersions } from "../../../src/proxy/haproxy/tables";
import {
  activateVersion,
  bundleOfVersion,
  findVersion,
  markVersionUnknown,
  rejectVersion,
  storeVersion,
} from "../../../src/proxy/haproxy/versions";
import { certificates } from "../../../src/proxy/pki/tables";
import { selfSignedCertificate } from "../../../src/proxy/pki/x509";
import { database } from "../../../src/shared/db";
import { eq } from "drizzle-orm";

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

describe("a stored version's bundle", () => {
  it("ships every certificate of a version that has more than D1's 100 parameters of them", async () => {
    const notAfter = new Date("2027-05-01T00:00:00Z");
    const pem = await selfSignedCertificate({ commonName: "bundle.example", notBefore: new Date(), notAfter });
    const names = Array.from({ length: 101 }, (_, i) => `acme_b${i}.bundle.example`);
    for (const name of names) {
      const row = { name, source: "acme" as const, domainNames: [name], issuer: "CN=x", serialNumber: "01" };
      await db()
        .insert(certificates)
        .values({ ...row, notBefore: new Date(), notAfter, ...pem });
    }
    const certificateFiles = [...names, "acme_gone.bundle.example"].map((name) => ({
      file: `certs/${name}.pem`,
      name,
    }));
    const jobRunId = await createJobRun(db(), { kind: "gensynchaprx", trigger: "test" });
    const files = { "haproxy.cfg": "# many certificates\n" };
    const id = await storeVersion(db(), { digest: "sha256:many", jobRunId, files, certificateFiles, now: new Date() });
    const [row] = await db().select().from(haproxyVersions).where(eq(haproxyVersions.id, id));
    const bundle = await bundleOfVersion(db(), row, files);
    expect(bundle.missing).toEqual(["acme_gone.bundle.example"]);
    const stored = await db().select().from(certificates).where(eq(certificates.name, names[100]));
    expect(Object.keys(bundle.files)).toHaveLength(102);
    expect(bundle.files[`certs/${names[100]}.pem`]).toBe(combinedPem(stored[0]));
  });
});

describe("a stored version's files", () => {
  it("keeps a haproxy.cfg of 3 MB, past what one D1 value holds, in pieces that read back as it was", async () => {
    const jobRunId = await createJobRun(db(), { kind: "gensynchaprx", trigger: "test" });
    // 3,060,000 bytes, with two-byte characters across the pieces' bounds.
    const line = "backend é_x\n".padEnd(49, "#") + "\n";
    const cfg = line.repeat(60_000);
    expect(new TextEncoder().encode(cfg).length).toBe(3_060_000);
    const files = { "haproxy.cfg": cfg, "domain2backend.map": "" };
    const id = await storeVersion(db(), {
      digest: "sha256:big",
      jobRunId,
      files,
      certificateFiles: [],
      now: new Date(),
    });
    expect(await stored([id])).toEqual([["pending", 5]]);
    expect((await findVersion(db(), id))!.files).toEqual(files);
  });
});
