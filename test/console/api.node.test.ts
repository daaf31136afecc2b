// The console's requests in plain Node, fetch stubbed at the edge: a path the URL parser would resolve elsewhere (a
// segment of . or .., typed or escaped) is never sent, and any other goes out as named.
import { afterEach, describe, expect, it, vi } from "vitest";
import { NOT_SENT, proxyApi } from "../../console/api";

afterEach(() => vi.unstubAllGlobals());

describe("proxyApi", () => {
  it("answers a path with a dot segment 404 without sending it", async () => {
    const fetch = vi.fn();
    vi.stubGlobal("fetch", fetch);
    for (const label of ["..", ".", "%2E%2E", "%2e", ".%2E"]) {
      expect(await proxyApi("GET", `/projects/${label}`)).toEqual(NOT_SENT);
      expect(await proxyApi("POST", `/backends/${label}`, { body: {} })).toEqual(NOT_SENT);
    }
    expect(await proxyApi("GET", `/admin/jobs/${encodeURIComponent("..")}?x=1`)).toEqual(NOT_SENT);
    expect(fetch).not.toHaveBeenCalled();
  });

  it("sends any other path as named, query and escapes kept", async () => {
    const fetch = vi.fn(
      async (_path: string, _init?: RequestInit) =>
        new Response('{"ok":1}', { headers: { "Content-Type": "application/json" } }),
    );
    vi.stubGlobal("fetch", fetch);
    const paths = [`/projects/${encodeURIComponent("a/b")}`, "/projects/...", "/projects/.a", "/admin/jobs?limit=5"];
    for (const path of paths) {
      expect(await proxyApi("GET", path)).toEqual({
        status: 200,
        ok: true,
        body: { ok: 1 },
        text: '{"ok":1}',
        etag: null,
      });
    }
    expect(fetch.mock.calls.map(([path]) => path)).toEqual(paths);
  });
});
