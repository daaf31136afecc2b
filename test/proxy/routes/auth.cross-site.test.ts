// A browser's remembered Basic login cannot be used by another site's page: requests marked cross-site are refused.
import { beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_AUTH,
  asAdmin,
  call,
  createApiUser,
  createProject,
  errorBody,
  expectJson,
  rowsOf,
} from "../../support/proxy-api";

const refusal = errorBody(
  "Refused: a page of another site may not use this API's login (Sec-Fetch-Site), nothing was done",
);

/** What a form on another site sends: text/plain whose text is JSON, the cached login, the browser's marking. */
const formPost = (path: string, auth: string, body: unknown, site: string) =>
  call(path, {
    method: "POST",
    headers: {
      Authorization: auth,
      "Content-Type": "text/plain",
      "Sec-Fetch-Site": site,
      "Sec-Fetch-Mode": "navigate",
    },
    body: `${JSON.stringify(body)}\r\n`,
  });

let tenant: string;

beforeAll(async () => {
  await createProject("xsite");
  tenant = await createApiUser("xsiteuser", ["xsite"]);
});

describe("requests a browser marks as coming from another site", () => {
  for (const site of ["cross-site", "same-site"]) {
    it(`refuses the administrator's cached login from a ${site} form with 403, and creates no API user`, async () => {
      const body = { username: `evil${site.length}`, password: "evil-password", projectPatterns: [".*"] };
      expect(await expectJson(formPost("/admin/apiusers", ADMIN_AUTH, body, site), 403)).toEqual(refusal);
      expect(await rowsOf(`select username from api_users where username = '${body.username}'`)).toEqual([]);
    });
  }

  it("refuses a tenant's cached login from another site, and writes nothing", async () => {
    const response = formPost("/backends/xsite", tenant, { label: "planted" }, "cross-site");
    expect(await expectJson(response, 403)).toEqual(refusal);
    expect(await rowsOf("select label from backends where label = 'planted'")).toEqual([]);
  });

  it("refuses a cross-site navigation to a job, a GET that changes state", async () => {
    const response = call("/admin/gensynchaprx", {
      headers: { Authorization: tenant, "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate" },
    });
    expect(await expectJson(response, 403)).toEqual(refusal);
    expect(await rowsOf("select id from job_runs where kind = 'gensynchaprx'")).toEqual([]);
  });

  it("refuses before the credentials are looked at, so no login dialog is opened for the other site", async () => {
    const response = await call("/test/authping", { headers: { "Sec-Fetch-Site": "cross-site" } });
    expect(response.status).toBe(403);
    expect(response.headers.get("WWW-Authenticate")).toBeNull();
    expect(await response.json()).toEqual(refusal);
  });
});

describe("requests a browser marks as its own or the user's", () => {
  for (const site of ["same-origin", "none"]) {
    it(`lets Sec-Fetch-Site: ${site} through (the console, Swagger UI, the address bar)`, async () => {
      const response = await call("/test/authping", { headers: { Authorization: tenant, "Sec-Fetch-Site": site } });
      expect(response.status).toBe(200);
      expect(await response.text()).toBe("authpong xsiteuser from master instance");
    });
  }

  it("lets a client that is no browser (no Sec-Fetch-Site) write as before", async () => {
    const body = await expectJson(asAdmin("/backends/xsite", "POST", { label: "fromcurl" }), 200);
    expect(body.success).toBe(true);
    expect(await rowsOf("select label from backends where label = 'fromcurl'")).toEqual([{ label: "fromcurl" }]);
  });
});
