// The news accounts: sign-up (POST /users), login (POST /auth), session tokens, and the /users routes.
import { env } from "cloudflare:workers";
import { decodeJwt, SignJWT, UnsecuredJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { verifyPassword } from "../../../src/shared/passwords";
import { database } from "../../../src/shared/db";
import { findUserByEmail } from "../../../src/news/store/users";
import { basic, call, callJson } from "../../support/worker-http";
import {
  bearer,
  expectRefused,
  getJson,
  JWT_SECRET,
  MASTER_KEY,
  REFUSED,
  signUp,
  UNKNOWN_ID,
  type SignedUp,
} from "../../support/news-api";
import { expectNewsError } from "../../support/news-errors";

const encoder = new TextEncoder();
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

async function postForm(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return call(path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: form(fields),
  });
}

/** POST /auth as a form with the master key and these Basic credentials. */
const logIn = (email: string, password: string) =>
  postForm("/auth", { access_token: MASTER_KEY }, { Authorization: basic(email, password) });

/** POST /auth as JSON with the master key and these Basic credentials. */
const logInWithJson = (email: string, password: string) =>
  callJson("/auth", "POST", { access_token: MASTER_KEY }, { Authorization: basic(email, password) });

/** PUT /users/:id/password with these headers (Basic credentials or a token). */
const putPassword = (id: string, password: string, headers: Record<string, string>) =>
  callJson(`/users/${id}/password`, "PUT", { password }, headers);

const { masterKey, token: badToken, login } = REFUSED;

describe("POST /users", () => {
  it("creates a user from form fields with the master key and answers 201 {token, user}", async () => {
    const response = await postForm("/users", {
      email: "  Alice@Example.COM ",
      password: "123456",
      access_token: MASTER_KEY,
    });
    expect(response.status).toBe(201);
    const body = (await response.json()) as SignedUp;
    expect(Object.keys(body).sort()).toEqual(["token", "user"]);
    expect(body.user).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "alice",
      picture: expect.stringMatching(/^https:\/\/gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon$/),
      role: "user",
      email: "alice@example.com",
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    expect(JSON.stringify(body)).not.toMatch(/password|pbkdf2/i);
  });

  it("uses md5 of the e-mail address for the default Gravatar picture", async () => {
    const { user } = await signUp("gravatar@example.com");
    const digest = await crypto.subtle.digest("MD5", encoder.encode("gravatar@example.com"));
    const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(user.picture).toBe(`https://gravatar.com/avatar/${hex}?d=identicon`);
  });

  it("accepts JSON with name, picture and role admin, and the master key as Bearer", async () => {
    const response = await callJson(
      "/users",
      "POST",
      {
        email: "boss@example.com",
        password: "boss-secret",
        name: "The Boss",
        picture: "https://example.com/boss.png",
        role: "admin",
      },
      { Authorization: `Bearer ${MASTER_KEY}` },
    );
    expect(response.status).toBe(201);
    const { user } = (await response.json()) as SignedUp;
    expect(user).toMatchObject({
      email: "boss@example.com",
      name: "The Boss",
      picture: "https://example.com/boss.png",
      role: "admin",
    });
  });

  it("accepts the master key as access_token in the query string", async () => {
    const response = await callJson(`/users?access_token=${MASTER_KEY}`, "POST", {
      email: "query@example.com",
      password: "123456",
    });
    expect(response.status).toBe(201);
  });

  it("stores a PBKDF2 hash, never the password", async () => {
    await signUp("hashed@example.com", { password: "correct horse" });
    const stored = await findUserByEmail(database(env.DB), "hashed@example.com");
    expect(stored!.passwordHash).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect(stored!.passwordHash).not.toContain("correct horse");
    expect(await verifyPassword("correct horse", stored!.passwordHash)).toBe(true);
  });

  it("answers 401 in the news shape without the master key", async () => {
    await expectRefused(
      await callJson("/users", "POST", { email: "nokey@example.com", password: "123456" }),
      masterKey,
    );
    expect(await findUserByEmail(database(env.DB), "nokey@example.com")).toBeUndefined();
  });

  it("answers 401 with a wrong master key in the body, the query or the header", async () => {
    await expectRefused(
      await callJson("/users", "POST", { email: "wrong1@example.com", password: "123456", access_token: "nope" }),
      masterKey,
    );
    await expectRefused(
      await callJson("/users?access_token=nope", "POST", { email: "wrong2@example.com", password: "123456" }),
      masterKey,
    );
    await expectRefused(
      await callJson(
        "/users",
        "POST",
        { email: "wrong3@example.com", password: "123456" },
        { Authorization: "Bearer nope" },
      ),
      masterKey,
    );
  });

  it("answers 401 to a user token in place of the master key", async () => {
    const { token } = await signUp("notmaster@example.com");
    await expectRefused(
      await callJson("/users", "POST", { email: "victim@example.com", password: "123456" }, bearer(token)),
      masterKey,
    );
  });

  it("checks the master key before validating the body", async () => {
    await expectRefused(await callJson("/users", "POST", { email: "not-an-email", password: "1" }), masterKey);
  });

  it("answers 409 for an e-mail address already registered, whatever its case", async () => {
    await signUp("dup@example.com");
    const response = await callJson("/users", "POST", {
      access_token: MASTER_KEY,
      email: " DUP@example.com",
      password: "123456",
    });
    await expectNewsError(response, 409, "unique", "email", "email already registered");
  });

  const validationCases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    [
      "a missing e-mail",
      { password: "123456" },
      { valid: false, name: "required", param: "email", value: null, required: true, message: "email is required" },
    ],
    [
      "a malformed e-mail (reported trimmed and lower-cased)",
      { email: " Not-An-Email ", password: "123456" },
      {
        valid: false,
        name: "match",
        param: "email",
        value: "not-an-email",
        match: "/^\\S+@\\S+\\.\\S+$/",
        message: "email must match regular expression /^\\S+@\\S+\\.\\S+$/",
      },
    ],
    [
      "a missing password",
      { email: "nopass@example.com" },
      {
        valid: false,
        name: "required",
        param: "password",
        value: null,
        required: true,
        message: "password is required",
      },
    ],
    [
      "a password shorter than 6 characters (its value is not echoed)",
      { email: "short@example.com", password: "12345" },
      {
        valid: false,
        name: "minlength",
        param: "password",
        value: null,
        minlength: 6,
        message: "password must have length greater than or equal to 6",
      },
    ],
    [
      "an unknown role",
      { email: "root@example.com", password: "123456", role: "root" },
      {
        valid: false,
        name: "enum",
        param: "role",
        value: "root",
        enum: ["user", "admin"],
        message: "role must be one of: user, admin",
      },
    ],
    [
      "a name that is not a string",
      { email: "num@example.com", password: "123456", name: 42 },
      { valid: false, name: "type", param: "name", value: 42, type: "string", message: "name must be a string" },
    ],
  ];
  for (const [label, fields, expected] of validationCases) {
    it(`answers 400 with the validation object for ${label}`, async () => {
      const response = await callJson("/users", "POST", { access_token: MASTER_KEY, ...fields });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual(expected);
    });
  }

  it("answers 400 for a JSON body that does not parse", async () => {
    const response = await call("/users", {
      method: "POST",
      headers: { "content-type": "application/json", Authorization: `Bearer ${MASTER_KEY}` },
      body: "{not json",
    });
    await expectNewsError(response, 400, "json", "body", "body must be valid JSON");
  });
});

describe("POST /auth", () => {
  beforeAll(async () => {
    await signUp("login@example.com", { password: "login-secret" });
  });

  it("answers 201 {token, user} for Basic credentials plus the master key, the token carrying {id, ver} and an expiry", async () => {
    const response = await logIn("Login@Example.com", "login-secret");
    expect(response.status).toBe(201);
    const body = (await response.json()) as SignedUp;
    expect(body.user).toMatchObject({ email: "login@example.com", name: "login", role: "user" });
    const claims = decodeJwt(body.token);
    expect(Object.keys(claims).sort()).toEqual(["exp", "iat", "id", "ver"]);
    expect(claims.id).toBe(body.user.id);
    expect(claims.ver).toBe(0);
    expect(claims.exp! - claims.iat!).toBe(7 * 24 * 3600);
    const me = await getJson("/users/me", body.token);
    expect(me.status).toBe(200);
    expect(((await me.json()) as { id: string }).id).toBe(body.user.id);
  });

  it("answers 401 without the master key even with good credentials", async () => {
    await expectRefused(
      await call("/auth", { method: "POST", headers: { Authorization: basic("login@example.com", "login-secret") } }),
      masterKey,
    );
  });

  it("answers 401 with a wrong master key", async () => {
    await expectRefused(
      await postForm("/auth", { access_token: "wrong" }, { Authorization: basic("login@example.com", "login-secret") }),
      masterKey,
    );
  });

  it("answers 401 with a Basic challenge without credentials", async () => {
    await expectRefused(await postForm("/auth", { access_token: MASTER_KEY }), login);
  });

  it("answers a wrong password and an unknown e-mail with the same 401", async () => {
    const wrongPassword = await logIn("login@example.com", "not-the-secret");
    const unknownEmail = await logIn("nobody@example.com", "login-secret");
    for (const response of [wrongPassword, unknownEmail]) await expectRefused(response, login);
    expect([...wrongPassword.headers].filter(([name]) => name !== "date")).toEqual(
      [...unknownEmail.headers].filter(([name]) => name !== "date"),
    );
  });

  it("answers 400 with the validation object for a malformed e-mail", async () => {
    const badEmail = await logIn("nobody", "login-secret");
    expect(badEmail.status).toBe(400);
    expect(await badEmail.json()).toMatchObject({ valid: false, name: "match", param: "email", value: "nobody" });
  });

  it("answers a wrong password of any length with the 401 of any wrong password, never a length rule", async () => {
    const attempt = (password: string) => logIn("login@example.com", password);
    const reference = await attempt("not-the-secret");
    await expectRefused(reference, login);
    const headersOf = (response: Response) => [...response.headers].filter(([name]) => name !== "date");
    for (const password of ["", "1", "12345", "login", "x".repeat(1025), "login-secret!"]) {
      const response = await attempt(password);
      await expectRefused(response, login);
      expect(headersOf(response)).toEqual(headersOf(reference));
    }
  });
});

describe("tokens", () => {
  let alice: SignedUp;
  beforeAll(async () => {
    alice = await signUp("token-alice@example.com");
  });

  const sign = (payload: Record<string, unknown>, secret = JWT_SECRET) =>
    new SignJWT(payload)
      .setProtectedHeader({ alg: "HS256" })
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(encoder.encode(secret));

  it("accepts the token as Bearer, as access_token in the query and in the body", async () => {
    expect((await getJson("/users/me", alice.token)).status).toBe(200);
    expect((await call(`/users/me?access_token=${alice.token}`)).status).toBe(200);
    const viaBody = await callJson(`/users/${alice.user.id}`, "PUT", { access_token: alice.token, name: "Alice B" });
    expect(viaBody.status).toBe(200);
    expect(await viaBody.json()).toMatchObject({ name: "Alice B" });
  });

  it("refuses a missing token", async () => {
    await expectRefused(await call("/users/me"), badToken);
  });

  it("refuses an expired token", async () => {
    const expired = await new SignJWT({ id: alice.user.id })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(encoder.encode(JWT_SECRET));
    await expectRefused(await getJson("/users/me", expired), badToken);
  });

  it("refuses a token whose payload was changed after signing", async () => {
    const other = await signUp("token-other@example.com");
    const [header, , signature] = alice.token.split(".");
    const forgedPayload = btoa(JSON.stringify({ ...decodeJwt(alice.token), id: other.user.id }))
      .replace(/=+$/, "")
      .replaceAll("+", "-")
      .replaceAll("/", "_");
    await expectRefused(await getJson("/users/me", `${header}.${forgedPayload}.${signature}`), badToken);
  });

  it("refuses a token with a damaged signature", async () => {
    const flipped = alice.token.slice(0, -2) + (alice.token.endsWith("AA") ? "BB" : "AA");
    await expectRefused(await getJson("/users/me", flipped), badToken);
  });

  it("refuses a token signed with another secret", async () => {
    await expectRefused(
      await getJson("/users/me", await sign({ id: alice.user.id }, "some-other-secret-0123456789abcdef")),
      badToken,
    );
  });

  it("refuses an unsigned (alg none) token", async () => {
    const unsecured = new UnsecuredJWT({ id: alice.user.id }).setIssuedAt().setExpirationTime("1h").encode();
    await expectRefused(await getJson("/users/me", unsecured), badToken);
  });

  it("refuses a well-signed token without an id or for a user that no longer exists", async () => {
    await expectRefused(await getJson("/users/me", await sign({ sub: alice.user.id })), badToken);
    await expectRefused(
      await getJson("/users/me", await sign({ id: "00000000-0000-0000-0000-000000000000" })),
      badToken,
    );
  });

  it("accepts a token it signed itself with the secret's UTF-8 bytes", async () => {
    const response = await getJson("/users/me", await sign({ id: alice.user.id, ver: 0 }));
    expect(response.status).toBe(200);
  });
});

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
