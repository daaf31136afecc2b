// The original's `me` in PUT /users/{id} and /password, and its order: an unknown id is 404 before who may change it.
import { describe, expect, it } from "vitest";
import { basic, callJson } from "../../support/worker-http";
import { bearer, MASTER_KEY, signUp, UNKNOWN_ID } from "../../support/news-api";

const NO_SUCH_USER = "00000000-0000-0000-0000-000000000000";

describe("PUT /users/me", () => {
  it("changes the calling user's own data", async () => {
    const erin = await signUp("me-erin@example.com", { name: "Erin" });
    const response = await callJson("/users/me", "PUT", { name: "Erin E" }, bearer(erin.token));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ...erin.user, name: "Erin E" });
  });

  it("changes an admin's own data, not a user called me", async () => {
    const admin = await signUp("me-admin@example.com", { role: "admin", name: "Boss" });
    const response = await callJson("/users/me", "PUT", { name: "Big Boss" }, bearer(admin.token));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ...admin.user, name: "Big Boss" });
  });
});

describe("PUT /users/me/password", () => {
  it("changes the password of the user whose Basic credentials came", async () => {
    const fay = await signUp("me-fay@example.com", { password: "fay-old-secret" });
    const response = await callJson(
      "/users/me/password",
      "PUT",
      { password: "fay-new-secret" },
      { Authorization: basic("me-fay@example.com", "fay-old-secret") },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(fay.user);
    const login = (password: string) =>
      callJson("/auth", "POST", { access_token: MASTER_KEY }, { Authorization: basic("me-fay@example.com", password) });
    expect((await login("fay-old-secret")).status).toBe(401);
    expect((await login("fay-new-secret")).status).toBe(201);
  });
});

describe("an id that names no user", () => {
  it("answers 404 to a user's PUT /users/{id}, as the original looked the user up first", async () => {
    const gus = await signUp("me-gus@example.com");
    const response = await callJson(`/users/${NO_SUCH_USER}`, "PUT", { name: "X" }, bearer(gus.token));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual(UNKNOWN_ID);
  });

  it("answers 404 to PUT /users/{id}/password with valid credentials, and changes nothing", async () => {
    await signUp("me-hal@example.com", { password: "hal-secret" });
    const auth = { Authorization: basic("me-hal@example.com", "hal-secret") };
    const response = await callJson(`/users/${NO_SUCH_USER}/password`, "PUT", { password: "hal-new-secret" }, auth);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual(UNKNOWN_ID);
    const login = await callJson("/auth", "POST", { access_token: MASTER_KEY }, auth);
    expect(login.status).toBe(201);
  });
});
