// The /users routes once signed up: own and public views, edits, password changes, the admins' list, deletion.
import { beforeAll, describe, expect, it } from "vitest";
import { basic, call, callJson } from "../../support/worker-http";
import {
  bearer,
  expectRefused,
  getJson,
  MASTER_KEY,
  REFUSED,
  signUp,
  UNKNOWN_ID,
  type SignedUp,
} from "../../support/news-api";
import { expectNewsError } from "../../support/news-errors";

/** POST /auth as JSON with the master key and these Basic credentials. */
const logInWithJson = (email: string, password: string) =>
  callJson("/auth", "POST", { access_token: MASTER_KEY }, { Authorization: basic(email, password) });

/** PUT /users/:id/password with these headers (Basic credentials or a token). */
const putPassword = (id: string, password: string, headers: Record<string, string>) =>
  callJson(`/users/${id}/password`, "PUT", { password }, headers);

const { token: badToken, login } = REFUSED;

describe("users", () => {
  let admin: SignedUp;
  let bob: SignedUp;
  let carol: SignedUp;
  beforeAll(async () => {
    admin = await signUp("users-admin@example.com", { role: "admin", name: "Admin" });
    bob = await signUp("bob@example.com", { password: "bob-secret", name: "Bob" });
    carol = await signUp("carol@example.com", { password: "carol-secret", name: "Carol" });
  });

  it("GET /users/me answers the full view", async () => {
    const response = await getJson("/users/me", bob.token);
    expect(await response.json()).toEqual(bob.user);
    expect(Object.keys(bob.user).sort()).toEqual(["createdAt", "email", "id", "name", "picture", "role"]);
  });

  it("GET /users/:id answers the public view to anyone, 404 for an unknown id", async () => {
    const response = await call(`/users/${bob.user.id}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id: bob.user.id, name: "Bob", picture: bob.user.picture });
    const missing = await call("/users/00000000-0000-0000-0000-000000000000");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(UNKNOWN_ID);
  });

  it("PUT /users/:id lets a user change their own name and picture, not their role", async () => {
    const response = await callJson(
      `/users/${carol.user.id}`,
      "PUT",
      { name: "Carol C", picture: "https://example.com/c.png", role: "admin" },
      bearer(carol.token),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ...carol.user, name: "Carol C", picture: "https://example.com/c.png" });
  });

  it("PUT /users/:id refuses another user's data with 401", async () => {
    const response = await callJson(`/users/${carol.user.id}`, "PUT", { name: "Hacked" }, bearer(bob.token));
    expect(response.headers.get("WWW-Authenticate")).toBe('Bearer realm="Users"');
    await expectNewsError(response, 401, "unauthorized", "id", "You can't change other user's data");
  });

  it("PUT /users/:id lets an admin change anyone's data, 404 for an unknown id", async () => {
    // A user of its own: the other tests read bob as beforeAll made him.
    const renamed = await signUp("renamed@example.com", { name: "Renamed" });
    const response = await callJson(`/users/${renamed.user.id}`, "PUT", { name: "Robert" }, bearer(admin.token));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: renamed.user.id, name: "Robert" });
    const missing = await callJson(
      "/users/00000000-0000-0000-0000-000000000000",
      "PUT",
      { name: "X" },
      bearer(admin.token),
    );
    expect(missing.status).toBe(404);
  });

  it("PUT /users/:id/password changes one's own password with Basic credentials", async () => {
    const dave = await signUp("dave@example.com", { password: "dave-old-secret" });
    const response = await putPassword(dave.user.id, "dave-new-secret", {
      Authorization: basic("dave@example.com", "dave-old-secret"),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(dave.user);
    const oldLogin = await logInWithJson("dave@example.com", "dave-old-secret");
    expect(oldLogin.status).toBe(401);
    const newLogin = await logInWithJson("dave@example.com", "dave-new-secret");
    expect(newLogin.status).toBe(201);
  });

  it("PUT /users/:id/password refuses another user's password, a wrong password, a token and a short password", async () => {
    const other = await putPassword(carol.user.id, "takeover-1", {
      Authorization: basic("bob@example.com", "bob-secret"),
    });
    expect(other.headers.get("WWW-Authenticate")).toBe('Basic realm="Users"');
    await expectNewsError(other, 401, "unauthorized", "password", "You can't change other user's password");
    const wrong = await putPassword(bob.user.id, "new-secret", {
      Authorization: basic("bob@example.com", "wrong-secret"),
    });
    await expectRefused(wrong, login);
    const token = await putPassword(bob.user.id, "new-secret", bearer(bob.token));
    await expectRefused(token, login);
    const short = await putPassword(bob.user.id, "123", { Authorization: basic("bob@example.com", "bob-secret") });
    expect(short.status).toBe(400);
    expect(await short.json()).toMatchObject({ name: "minlength", param: "password" });
  });

  it("GET /users is for admins only", async () => {
    await expectRefused(await getJson("/users", bob.token), badToken);
    await expectRefused(await call("/users"), badToken);
  });

  it("GET /users lists full views with X-Total-Count, q, sort, paging and fields", async () => {
    const all = await getJson("/users?sort=email&limit=100", admin.token);
    expect(all.status).toBe(200);
    const users = (await all.json()) as { email: string }[];
    expect(Number(all.headers.get("X-Total-Count"))).toBe(users.length);
    expect(users.map((u) => u.email)).toEqual([...users.map((u) => u.email)].sort());

    const q = await getJson("/users?q=CAROL", admin.token);
    expect(q.headers.get("X-Total-Count")).toBe("1");
    expect(await q.json()).toEqual([expect.objectContaining({ id: carol.user.id, email: "carol@example.com" })]);

    const page = await getJson("/users?sort=-email&limit=1&page=2&fields=email", admin.token);
    expect(page.headers.get("X-Total-Count")).toBe(String(users.length));
    expect(await page.json()).toEqual([
      { id: expect.any(String), email: [...users.map((u) => u.email)].sort().reverse()[1] },
    ]);
  });

  it("GET /users answers 400 for a limit above 100 and an unknown sort field", async () => {
    const limit = await getJson("/users?limit=500", admin.token);
    expect(limit.status).toBe(400);
    expect(await limit.json()).toEqual({
      valid: false,
      name: "max",
      param: "limit",
      value: 500,
      max: 100,
      message: "limit must be lower than or equal to 100",
    });
    const sort = await getJson("/users?sort=passwordHash", admin.token);
    expect(sort.status).toBe(400);
    expect(await sort.json()).toMatchObject({ valid: false, name: "enum", param: "sort", value: "passwordHash" });
  });

  it("answers an id longer than the documented 64 characters as an unknown one: 404", async () => {
    const long = `${admin.user.id}${"x".repeat(65 - admin.user.id.length)}`;
    expect(long.length).toBe(65);
    const answers = [
      await call(`/users/${long}`),
      await callJson(`/users/${long}`, "PUT", { name: "Long" }, bearer(admin.token)),
      await call(`/users/${long}`, { method: "DELETE", headers: bearer(admin.token) }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(await answer.json()).toEqual(UNKNOWN_ID);
    }
    expect(await (await getJson("/users/me", admin.token)).json()).toEqual(admin.user);
  });

  it("DELETE /users/:id is for admins only and answers 204, then 404", async () => {
    const erin = await signUp("erin@example.com");
    await expectRefused(
      await call(`/users/${erin.user.id}`, { method: "DELETE", headers: bearer(bob.token) }),
      badToken,
    );
    await expectRefused(
      await call(`/users/${erin.user.id}`, { method: "DELETE", headers: bearer(erin.token) }),
      badToken,
    );
    const deleted = await call(`/users/${erin.user.id}`, { method: "DELETE", headers: bearer(admin.token) });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
    expect((await call(`/users/${erin.user.id}`, { method: "DELETE", headers: bearer(admin.token) })).status).toBe(404);
    // The deleted user's token no longer works.
    await expectRefused(await getJson("/users/me", erin.token), badToken);
  });
});
