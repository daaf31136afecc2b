// check-alpn on both a backend's default-server and one of its servers (HAProxy 2.6 frees the shared value again on
// each such server, and `haproxy -c` aborts with no ALERT): refused whichever of the two a write posts and whichever is
// stored, and by the switch of containers.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { as, createApiUser, createBackend, errorBody, expectJson } from "../../support/proxy-api";
import { createProjectOnHost } from "../../support/proxy-fixtures";
import { silenceConsoleAndRestoreMocks } from "../../support/silent-console";

let tenant: string;
let one: number;
let two: number;

const twice =
  "server: check-alpn is set by the backend's default-server already; set it in one place " +
  "(HAProxy 2.6 frees the shared value once per server setting it again, and crashes)";
const post = (body: unknown) => as(tenant, "/backends/alpn", "POST", body);
const stored = async () =>
  (
    await env.DB.prepare(
      "select b.label, b.params, b.version, group_concat(coalesce(bc.params, '-'), '|') as links from backends b join projects p on p.id = b.project_id left join backend_containers bc on bc.backend_id = b.id where p.label = 'alpn' group by b.id order by b.id",
    ).all()
  ).results;

beforeAll(async () => {
  ({ one, two } = await createProjectOnHost("alpn", {
    hostname: "node1.example.net",
    ipv6: "2001:db8::1",
    containers: { one: "2001:db8::41", two: "2001:db8::42" },
  }));
  await createBackend("alpn", {
    label: "defaults",
    params: "default-server check check-alpn h2",
    backendContainers: [{ containerId: one, params: "check-ssl verify none" }],
  });
  await createBackend("alpn", {
    label: "servers",
    backendContainers: [
      { containerId: one, params: "check-alpn h2" },
      { containerId: two, params: "check-alpn h2" },
    ],
  });
  tenant = await createApiUser("alpnuser", ["alpn"]);
});

silenceConsoleAndRestoreMocks();

describe("check-alpn on both the default-server and a server", () => {
  // The containers' ids are known once beforeAll has run: bodies and messages are read then.
  it.each([
    [
      "posting both",
      () => ({
        label: "fresh",
        params: "default-server check-alpn h2",
        backendContainers: [{ containerId: one, params: "check check-alpn h2" }],
      }),
      () => `backendContainers[0].params line 1: ${twice}`,
    ],
    [
      "posting server params against the stored default-server",
      () => ({
        label: "defaults",
        backendContainers: [
          { containerId: one, params: "check-ssl verify none" },
          { containerId: two, params: "check-alpn http/1.1" },
        ],
      }),
      () => `backendContainers[1].params line 1: ${twice}`,
    ],
    [
      "posting a default-server against the stored server params",
      () => ({ label: "servers", params: "default-server check-alpn h2" }),
      () => `params: the server of container ${one} conflicts with this default-server (${twice})`,
    ],
  ])("is refused with 400 when %s, and nothing is stored", async (_what, body, message) => {
    const before = await stored();
    expect(await expectJson(post(body()), 400)).toEqual(errorBody(message()));
    expect(await stored()).toEqual(before);
  });

  it("is refused when setContainersOf would copy such server params", async () => {
    const before = await stored();
    expect(await expectJson(as(tenant, "/backends/alpn/defaults/setContainersOf/servers", "PATCH"), 500)).toEqual(
      errorBody(
        `Unable to process backend container update: Target backend with label servers: params of container ${one} line 1: ${twice}`,
      ),
    );
    expect(await stored()).toEqual(before);
  });

  it("is stored when check-alpn is set in one place only", async () => {
    await expectJson(post({ label: "servers", params: "default-server check" }), 200);
    await expectJson(
      post({ label: "defaults", backendContainers: [{ containerId: two, params: "check-ssl verify none alpn h2" }] }),
      200,
    );
    expect((await stored()).map((row) => [row.label, row.params, row.links])).toEqual([
      ["defaults", "default-server check check-alpn h2", "check-ssl verify none alpn h2"],
      ["servers", "default-server check", "check-alpn h2|check-alpn h2"],
    ]);
  });
});
