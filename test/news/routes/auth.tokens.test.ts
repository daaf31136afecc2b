// Login (POST /auth) and the session token it answers: where a token may be sent, and every bad one refused alike.
import { decodeJwt, SignJWT, UnsecuredJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { basic, call, callJson, postForm } from "../../support/worker-http";
import { expectRefused, getJson, JWT_SECRET, MASTER_KEY, REFUSED, signUp, type SignedUp } from "../../support/news-api";

const encoder = new TextEncoder();

/** POST /auth as a form with the master key and these Basic credentials. */
const logIn = (email: string, password: string) =>
  postForm("/auth", { access_token: MASTER_KEY }, { Authorization: basic(email, password) });

const { masterKey, token: badToken, login } = REFUSED;

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

describe("the jwt cookie, as restfulnews set and read it", () => {
  let bob: SignedUp;
  beforeAll(async () => {
    bob = await signUp("cookie-bob@example.com", { password: "cookie-secret" });
  });

  const meWith = (headers: Record<string, string>) => call("/users/me", { headers });

  it("is set by a login to the token it answers, for this site only and out of scripts' reach", async () => {
    const response = await logIn("cookie-bob@example.com", "cookie-secret");
    expect(response.status).toBe(201);
    const { token } = (await response.json()) as SignedUp;
    expect(response.headers.getSetCookie()).toEqual([`jwt=${token}; Path=/; HttpOnly; Secure; SameSite=Strict`]);
    const me = await meWith({ Cookie: `jwt=${token}` });
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual(bob.user);
  });

  it("opens a route from the same origin, a navigation or a client that is not a browser, never from another site", async () => {
    const cookie = `jwt=${bob.token}`;
    for (const site of ["same-origin", "none"]) {
      expect((await meWith({ Cookie: cookie, "Sec-Fetch-Site": site })).status).toBe(200);
    }
    for (const site of ["cross-site", "same-site"]) {
      await expectRefused(await meWith({ Cookie: cookie, "Sec-Fetch-Site": site }), badToken);
    }
    const renamed = await callJson(
      `/users/${bob.user.id}`,
      "PUT",
      { name: "Evil" },
      {
        Cookie: cookie,
        "Sec-Fetch-Site": "cross-site",
      },
    );
    await expectRefused(renamed, badToken);
    expect(((await (await meWith({ Cookie: cookie })).json()) as { name: string }).name).toBe(bob.user.name);
  });

  it("comes after a token sent any other way, and never carries the master key", async () => {
    await expectRefused(await meWith({ Cookie: `jwt=${bob.token}`, Authorization: "Bearer not-a-token" }), badToken);
    const signUpByCookie = await call("/users", {
      method: "POST",
      headers: { Cookie: `jwt=${MASTER_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ email: "cookie-made@example.com", password: "123456" }),
    });
    await expectRefused(signUpByCookie, masterKey);
  });
});
