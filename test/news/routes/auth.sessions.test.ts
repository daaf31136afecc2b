// Session tokens after issue 16: a password change or a deletion ends every token issued before it, and a login costs
// one PBKDF2 derivation whether or not the user exists. Tokens without a version: auth.original-tokens.test.ts.
import { env } from "cloudflare:workers";
import { decodeJwt, SignJWT } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PBKDF2_ITERATIONS } from "../../../src/shared/passwords";
import { database } from "../../../src/shared/db";
import { getUser } from "../../../src/news/store/users";
import { basic, call, callJson } from "../../support/worker-http";
import { changePassword } from "../../support/news-users";
import { bearer, expectRefused, getJson, JWT_SECRET, MASTER_KEY, REFUSED, signUp } from "../../support/news-api";

const encoder = new TextEncoder();

afterEach(() => {
  vi.restoreAllMocks();
});

/** Exactly what every other invalid token gets: 401, the Bearer challenge, the same body. */
const expectTokenRefused = (response: Response) => expectRefused(response, REFUSED.token);

const login = (email: string, password: string) =>
  callJson("/auth", "POST", { access_token: MASTER_KEY }, { Authorization: basic(email, password) });

async function loginToken(email: string, password: string): Promise<string> {
  const response = await login(email, password);
  expect(response.status).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

const storedUser = (id: string) => getUser(database(env.DB), id);

const sign = (payload: Record<string, unknown>) =>
  new SignJWT(payload)
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(encoder.encode(JWT_SECRET));

describe("a password change", () => {
  it("refuses the tokens of sign-up and of every login before it, and nothing they send is stored", async () => {
    const frank = await signUp("frank@example.com", { password: "frank-old-secret", name: "Frank" });
    const loggedIn = await loginToken("frank@example.com", "frank-old-secret");
    expect((await getJson("/users/me", frank.token)).status).toBe(200);
    expect((await getJson("/users/me", loggedIn)).status).toBe(200);

    await changePassword(frank.user.id, "frank@example.com", "frank-old-secret", "frank-new-secret");

    await expectTokenRefused(await getJson("/users/me", frank.token));
    await expectTokenRefused(await getJson("/users/me", loggedIn));
    await expectTokenRefused(await call(`/users/me?access_token=${loggedIn}`));
    await expectTokenRefused(await callJson(`/users/${frank.user.id}`, "PUT", { name: "Hijacked" }, bearer(loggedIn)));
    await expectTokenRefused(
      await callJson(`/users/${frank.user.id}`, "PUT", { access_token: frank.token, name: "Hijacked" }),
    );
    expect((await storedUser(frank.user.id))!.name).toBe("Frank");
  });

  it("leaves the tokens issued after it working, until the next change", async () => {
    const grace = await signUp("grace@example.com", { password: "grace-secret-1" });
    await changePassword(grace.user.id, "grace@example.com", "grace-secret-1", "grace-secret-2");
    const second = await loginToken("grace@example.com", "grace-secret-2");
    expect(decodeJwt(second)).toMatchObject({ id: grace.user.id, ver: 1 });
    const me = await getJson("/users/me", second);
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual(grace.user);

    await changePassword(grace.user.id, "grace@example.com", "grace-secret-2", "grace-secret-3");
    await expectTokenRefused(await getJson("/users/me", second));
    const third = await loginToken("grace@example.com", "grace-secret-3");
    expect(decodeJwt(third)).toMatchObject({ id: grace.user.id, ver: 2 });
    expect((await getJson("/users/me", third)).status).toBe(200);
  });

  it("refuses an admin's earlier token on the admin routes, which then write nothing", async () => {
    const admin = await signUp("pw-admin@example.com", { password: "admin-old-secret", role: "admin" });
    const reader = await signUp("pw-reader@example.com");
    await changePassword(admin.user.id, "pw-admin@example.com", "admin-old-secret", "admin-new-secret");

    const story = { title: "Stolen session story", url: "https://desk.example.com/stolen", source: "stolen-desk" };
    await expectTokenRefused(await callJson("/news", "POST", story, bearer(admin.token)));
    await expectTokenRefused(
      await call(`/users/${reader.user.id}`, { method: "DELETE", headers: bearer(admin.token) }),
    );
    const stored = await getJson("/news?sources=stolen-desk", reader.token);
    expect(await stored.json()).toEqual([]);
    expect(await storedUser(reader.user.id)).toBeDefined();
  });
});

describe("a deleted user", () => {
  it("has every token refused, also once the e-mail address is registered again", async () => {
    const admin = await signUp("del-admin@example.com", { role: "admin" });
    const henry = await signUp("henry@example.com", { password: "henry-secret" });
    const loggedIn = await loginToken("henry@example.com", "henry-secret");
    expect((await call(`/users/${henry.user.id}`, { method: "DELETE", headers: bearer(admin.token) })).status).toBe(
      204,
    );

    await expectTokenRefused(await getJson("/users/me", henry.token));
    await expectTokenRefused(await getJson("/users/me", loggedIn));
    await expectTokenRefused(await callJson(`/users/${henry.user.id}`, "PUT", { name: "Ghost" }, bearer(loggedIn)));
    expect(await storedUser(henry.user.id)).toBeUndefined();

    // A new account with the same address is another user (new id, version 0): the old tokens name no one.
    const again = await signUp("henry@example.com", { password: "henry-secret" });
    expect(again.user.id).not.toBe(henry.user.id);
    await expectTokenRefused(await getJson("/users/me", loggedIn));
    expect((await getJson("/users/me", again.token)).status).toBe(200);
  });

  it("who was an admin can no longer write", async () => {
    const admin = await signUp("del-admin-2@example.com", { role: "admin" });
    const gone = await signUp("gone-admin@example.com", { role: "admin" });
    const reader = await signUp("del-reader@example.com");
    expect((await call(`/users/${gone.user.id}`, { method: "DELETE", headers: bearer(admin.token) })).status).toBe(204);

    const story = { title: "Deleted admin story", url: "https://desk.example.com/deleted", source: "deleted-desk" };
    await expectTokenRefused(await callJson("/news", "POST", story, bearer(gone.token)));
    await expectTokenRefused(await call(`/users/${reader.user.id}`, { method: "DELETE", headers: bearer(gone.token) }));
    expect(await (await getJson("/news?sources=deleted-desk", reader.token)).json()).toEqual([]);
    expect(await storedUser(reader.user.id)).toBeDefined();
  });
});

describe("the version claim", () => {
  it("must be the user's current version, as a non-negative integer", async () => {
    const jack = await signUp("jack@example.com");
    expect((await getJson("/users/me", await sign({ id: jack.user.id, ver: 0 }))).status).toBe(200);
    for (const ver of [1, -1, 0.5, "0", null, true, [0]]) {
      await expectTokenRefused(await getJson("/users/me", await sign({ id: jack.user.id, ver })));
    }
  });
});

describe("POST /auth", () => {
  it("derives one PBKDF2 hash at full cost for an unknown e-mail, a wrong password and a right one", async () => {
    await signUp("cost@example.com", { password: "cost-secret" });
    const derive = vi.spyOn(crypto.subtle, "deriveBits");
    const iterationsOf = async (response: Promise<Response>) => {
      derive.mockClear();
      const { status } = await response;
      return {
        status,
        iterations: derive.mock.calls.map(([params]) => (params as { iterations?: number }).iterations),
      };
    };
    expect(await iterationsOf(login("nobody-at-all@example.com", "cost-secret"))).toEqual({
      status: 401,
      iterations: [PBKDF2_ITERATIONS],
    });
    expect(await iterationsOf(login("cost@example.com", "not-the-secret"))).toEqual({
      status: 401,
      iterations: [PBKDF2_ITERATIONS],
    });
    expect(await iterationsOf(login("cost@example.com", "cost-secret"))).toEqual({
      status: 201,
      iterations: [PBKDF2_ITERATIONS],
    });
  });
});

describe("an e-mail address in HTTP Basic", () => {
  // "@." repeated with a space in it makes the e-mail pattern backtrack in cubic time: at 6,000 characters that was
  // 24 s of CPU for one unauthenticated request. The length rule now answers first, and alone.
  const hostile = `${"@.".repeat(3000)} x`;
  const tooLong = {
    valid: false,
    name: "maxlength",
    param: "email",
    value: hostile,
    maxlength: 254,
    message: "email must have length lower than or equal to 254",
  };

  it("is refused by its length before the pattern runs, with or without the master key", async () => {
    const changed = await callJson(
      "/users/x/password",
      "PUT",
      { password: "123456" },
      {
        Authorization: basic(hostile, "pw"),
      },
    );
    expect(changed.status).toBe(400);
    expect(await changed.json()).toEqual(tooLong);
    const loggedIn = await login(hostile, "pw");
    expect(loggedIn.status).toBe(400);
    expect(await loggedIn.json()).toEqual(tooLong);
  });
});
