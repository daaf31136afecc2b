// TLS versions that would leave a server none (HAProxy refuses such a server, and with it the whole file): a server's
// ssl-min-ver and ssl-max-ver are vetted with those of its backend's default-server, whichever of the two a write
// posts and whichever is stored; the switch of containers too; and the generator leaves out stored server params that
// conflict, with a warning (a write that leaves such a server as stored is not refused for it).
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { as, asAdmin, createApiUser, createBackend, errorBody, expectJson } from "../../support/proxy-api";
import { createProjectOnHost } from "../../support/proxy-fixtures";

let tenant: string;
let one: number;
let two: number;
let three: number;

const disabled = "(HAProxy would disable every TLS version)";
const conflict = (max: string) =>
  `server: ssl-min-ver TLSv1.3 of the backend's default-server is above ssl-max-ver ${max} ${disabled}`;
const post = (body: unknown) => as(tenant, "/backends/tls", "POST", body);
const stored = async () =>
  (
    await env.DB.prepare(
      "select b.label, b.params, b.version, group_concat(coalesce(bc.params, '-'), '|') as links from backends b left join backend_containers bc on bc.backend_id = b.id group by b.id order by b.id",
    ).all()
  ).results;

beforeAll(async () => {
  ({ one, two, three } = await createProjectOnHost("tls", {
    hostname: "node1.example.net",
    ipv6: "2001:db8::1",
    containers: { one: "2001:db8::31", two: "2001:db8::32", three: "2001:db8::33" },
  }));
  await createBackend("tls", {
    label: "modern",
    params: "default-server ssl-min-ver TLSv1.3",
    backendContainers: [{ containerId: one, params: "ssl verify none" }],
  });
  await createBackend("tls", {
    label: "old",
    backendContainers: [{ containerId: two, params: "ssl verify none ssl-max-ver TLSv1.2" }],
  });
  await createBackend("tls", {
    label: "legacy",
    params: "default-server ssl-min-ver TLSv1.3",
    backendContainers: [{ containerId: three, params: "ssl verify none" }],
  });
  tenant = await createApiUser("tlsuser", ["tls"]);
});

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
});

afterEach(() => vi.restoreAllMocks());

describe("a write that would leave a server no TLS version", () => {
  // The containers' ids are known once beforeAll has run: bodies and messages are read then.
  it.each([
    [
      "posting both",
      () => ({
        label: "fresh",
        params: "default-server ssl-min-ver TLSv1.3",
        backendContainers: [{ containerId: one, params: "ssl verify none ssl-max-ver TLSv1.2" }],
      }),
      () => `backendContainers[0].params line 1: ${conflict("TLSv1.2")}`,
    ],
    [
      "posting server params against the stored default-server",
      () => ({
        label: "modern",
        backendContainers: [{ containerId: one, params: "check-ssl verify none ssl-max-ver TLSv1.1" }],
      }),
      () => `backendContainers[0].params line 1: ${conflict("TLSv1.1")}`,
    ],
    [
      "posting a default-server against the stored server params",
      () => ({ label: "old", params: "default-server ssl-min-ver TLSv1.3" }),
      () => `params: the server of container ${two} conflicts with this default-server (${conflict("TLSv1.2")})`,
    ],
    [
      "posting one default-server line whose versions conflict",
      () => ({ label: "fresh", params: "default-server ssl ssl-min-ver TLSv1.3 ssl-max-ver TLSv1.0 verify none" }),
      () => `params line 1: default-server: ssl-min-ver TLSv1.3 is above ssl-max-ver TLSv1.0 ${disabled}`,
    ],
  ])("is refused with 400 when %s, and nothing is stored", async (_what, body, message) => {
    const before = await stored();
    expect(await expectJson(post(body()), 400)).toEqual(errorBody(message()));
    expect(await stored()).toEqual(before);
  });

  it("is stored when the versions overlap", async () => {
    const body = {
      label: "modern",
      backendContainers: [{ containerId: one, params: "ssl verify none ssl-max-ver TLSv1.3" }],
    };
    await expectJson(post(body), 200);
    await expectJson(post({ label: "old", params: "default-server ssl-min-ver TLSv1.2" }), 200);
    const rows = (await stored()).filter((row) => row.label === "modern" || row.label === "old");
    expect(rows.map((row) => [row.label, row.params, row.links])).toEqual([
      ["modern", "default-server ssl-min-ver TLSv1.3", "ssl verify none ssl-max-ver TLSv1.3"],
      ["old", "default-server ssl-min-ver TLSv1.2", "ssl verify none ssl-max-ver TLSv1.2"],
    ]);
    await expectJson(
      post({ label: "modern", backendContainers: [{ containerId: one, params: "ssl verify none" }] }),
      200,
    );
    await expectJson(post({ label: "old", params: "" }), 200);
  });

  it("is refused when setContainersOf would copy such server params", async () => {
    const before = await stored();
    expect(await expectJson(as(tenant, "/backends/tls/modern/setContainersOf/old", "PATCH"), 500)).toEqual(
      errorBody(
        `Unable to process backend container update: Target backend with label old: params of container ${two} line 1: ${conflict("TLSv1.2")}`,
      ),
    );
    expect(await stored()).toEqual(before);
  });
});

describe("rows stored with conflicting versions", () => {
  it("leave the server out of gensynchaprx's file, with a warning", async () => {
    await env.DB.prepare("update backend_containers set params = ? where container_id = ?")
      .bind("ssl verify none ssl-max-ver TLSv1.2", three)
      .run();
    const warnings: string[] = await expectJson(asAdmin("/admin/gensynchaprx"), 200);
    const backends = (await expectJson(as(tenant, "/projects/tls"), 200)).backends;
    const backend = backends.find((row: { label: string }) => row.label === "legacy").FQLabel;
    expect(warnings.filter((warning) => warning.includes(`backend ${backend}:`))).toEqual([
      `WARN: backend ${backend}: server node1.example.net_tls-three is left out: its params line 1 refused (${conflict("TLSv1.2")})`,
    ]);
    const config = (await expectJson(asAdmin("/admin/haproxy"), 200)).files["haproxy.cfg"];
    expect(config).toContain(`backend ${backend}\n    default-server ssl-min-ver TLSv1.3\n\n`);
  });
});

describe("a write that leaves a stored server as it is", () => {
  it("is not refused for that server's stored params; a server it adds or changes is vetted", async () => {
    await createBackend("tls", {
      label: "kept",
      params: "default-server ssl-min-ver TLSv1.3",
      backendContainers: [{ containerId: one, params: "ssl verify none" }],
    });
    const conflicting = "ssl verify none ssl-max-ver TLSv1.2";
    await env.DB.prepare(
      "update backend_containers set params = ? where container_id = ? and backend_id = (select b.id from backends b join projects p on p.id = b.project_id where p.label = 'tls' and b.label = 'kept')",
    )
      .bind(conflicting, one)
      .run();
    const kept = { containerId: one, params: conflicting };
    const [created] = (await stored()).filter((row) => row.label === "kept");
    expect(await expectJson(post({ label: "kept", fullname: "Kept", backendContainers: [kept] }), 200)).toEqual({
      success: true,
      payload: { key: "backendId", value: expect.any(Number) },
      warnings: [],
    });
    expect((await stored()).filter((row) => row.label === "kept")).toEqual([
      { ...created, version: Number(created.version) + 1 },
    ]);

    const before = await stored();
    const added = { label: "kept", backendContainers: [kept, { containerId: two, params: conflicting }] };
    expect(await expectJson(post(added), 400)).toEqual(
      errorBody(`backendContainers[1].params line 1: ${conflict("TLSv1.2")}`),
    );
    const changed = { label: "kept", backendContainers: [{ containerId: one, params: `${conflicting} check` }] };
    expect(await expectJson(post(changed), 400)).toEqual(
      errorBody(`backendContainers[0].params line 1: ${conflict("TLSv1.2")}`),
    );
    expect(await stored()).toEqual(before);
  });
});
