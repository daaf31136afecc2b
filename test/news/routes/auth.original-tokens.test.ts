// Issue 28, regression: tokens in the original service's format, `{id, iat, exp}` signed with JWT_SECRET (HS256),
// stay valid until their `exp` unless the user's password changed after their `iat` (and `{id, iat}` ones, without
// an end, with JWT_ORIGINAL_TOKENS_WITHOUT_EXP); this service's `{id, ver}` tokens keep their version rule.
import { env } from "cloudflare:workers";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { database } from "../../../src/shared/db";
import { getUser } from "../../../src/news/store/users";
import { IAT_LEEWAY_SECONDS } from "../../../src/news/routes/tokens";
import migration from "../../../migrations/0013_news_password_changed_at.sql?raw";
import { app } from "../../../src/app";
import { basic, call, callJson } from "../../support/worker-http";
import { changePassword } from "../../support/news-users";
import { bearer, expectRefused, getJson, JWT_SECRET, MASTER_KEY, REFUSED, signUp } from "../../support/news-api";

const encoder = new TextEncoder();
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A token as the original service signs it: `{id}` with `iat` and `exp`, no version. */
function originalToken(id: string, times: { iat?: number | null; exp?: number | null } = {}) {
  const jwt = new SignJWT({ id }).setProtectedHeader({ alg: "HS256", typ: "JWT" });
  const iat = times.iat === undefined ? nowSeconds() : times.iat;
  const exp = times.exp === undefined ? nowSeconds() + 7 * 86_400 : times.exp;
  if (iat !== null) jwt.setIssuedAt(iat);
  if (exp !== null) jwt.setExpirationTime(exp);
  return jwt.sign(encoder.encode(JWT_SECRET));
}

const expectTokenRefused = (response: Response) => expectRefused(response, REFUSED.token);

async function expectMe(token: string, user: object) {
  const response = await getJson("/users/me", token);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual(user);
}

async function login(email: string, password: string): Promise<string> {
  const response = await callJson(
    "/auth",
    "POST",
    { access_token: MASTER_KEY },
    { Authorization: basic(email, password) },
  );
  expect(response.status).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

describe("a token in the original format {id, iat, exp}", () => {
  it("is valid until its exp while the password has not changed, on every route a token opens", async () => {
    const ann = await signUp("orig-ann@example.com", { name: "Ann" });
    const token = await originalToken(ann.user.id);
    await expectMe(token, ann.user);
    expect((await call(`/users/me?access_token=${token}`)).status).toBe(200);
    const renamed = await callJson(`/users/${ann.user.id}`, "PUT", { name: "Ann B" }, bearer(token));
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toEqual({ ...ann.user, name: "Ann B" });
    expect((await getJson("/news?limit=1", token)).status).toBe(200);
  });

  it("opens the admin routes for an admin", async () => {
    const admin = await signUp("orig-admin@example.com", { role: "admin" });
    const token = await originalToken(admin.user.id);
    const listed = await getJson("/users?q=orig-admin@example.com", token);
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([admin.user]);
  });

  it("is refused once its exp has passed", async () => {
    const bea = await signUp("orig-bea@example.com");
    await expectTokenRefused(
      await getJson("/users/me", await originalToken(bea.user.id, { iat: nowSeconds() - 7200, exp: nowSeconds() - 1 })),
    );
  });

  it("is refused without an exp, without an iat, or with an iat ahead of the clock", async () => {
    const cal = await signUp("orig-cal@example.com");
    for (const times of [{ exp: null }, { iat: null }, { iat: nowSeconds() + IAT_LEEWAY_SECONDS + 120 }]) {
      await expectTokenRefused(await getJson("/users/me", await originalToken(cal.user.id, times)));
    }
    // A clock a little ahead (within the leeway) is not a reason to log anyone out.
    await expectMe(await originalToken(cal.user.id, { iat: nowSeconds() + 30 }), cal.user);
  });

  it("is refused for a user that does not exist (any more)", async () => {
    const admin = await signUp("orig-deleter@example.com", { role: "admin" });
    const dan = await signUp("orig-dan@example.com");
    const token = await originalToken(dan.user.id);
    expect((await call(`/users/${dan.user.id}`, { method: "DELETE", headers: bearer(admin.token) })).status).toBe(204);
    await expectTokenRefused(await getJson("/users/me", token));
  });
});

describe("JWT_ORIGINAL_TOKENS_WITHOUT_EXP", () => {
  /** GET /users/me under the setting given (undefined: as wrangler.toml sets it, which is unset). */
  const meWith = (token: string, setting?: string) =>
    app.request(
      "/users/me",
      { headers: bearer(token) },
      setting === undefined ? env : { ...env, JWT_ORIGINAL_TOKENS_WITHOUT_EXP: setting },
    );

  it("accepts an original token without exp when true, until the password changes", async () => {
    const hal = await signUp("endless-hal@example.com", { password: "hal-first-secret" });
    const endless = await originalToken(hal.user.id, { iat: nowSeconds() - 400 * 86_400, exp: null });
    const accepted = await meWith(endless, "true");
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toEqual(hal.user);
    // An issue time is still needed to order the token against a password change.
    await expectTokenRefused(await meWith(await originalToken(hal.user.id, { iat: null, exp: null }), "true"));
    await changePassword(hal.user.id, "endless-hal@example.com", "hal-first-secret", "hal-second-secret");
    await expectTokenRefused(await meWith(endless, "true"));
  });

  it("refuses an original token without exp when unset or false", async () => {
    const ida = await signUp("endless-ida@example.com");
    const endless = await originalToken(ida.user.id, { exp: null });
    await expectTokenRefused(await meWith(endless));
    await expectTokenRefused(await meWith(endless, "false"));
    expect((await meWith(endless, "true")).status).toBe(200);
  });
});

describe("a password change", () => {
  it("ends the tokens of both formats issued before it, and nothing they send is stored", async () => {
    const eve = await signUp("orig-eve@example.com", { password: "eve-old-secret", name: "Eve" });
    const original = await originalToken(eve.user.id, { iat: nowSeconds() - 5 });
    const versioned = await login("orig-eve@example.com", "eve-old-secret");
    await expectMe(original, eve.user);
    await expectMe(versioned, eve.user);

    await changePassword(eve.user.id, "orig-eve@example.com", "eve-old-secret", "eve-new-secret");

    for (const token of [original, versioned, eve.token]) {
      await expectTokenRefused(await getJson("/users/me", token));
      await expectTokenRefused(await callJson(`/users/${eve.user.id}`, "PUT", { name: "Hijacked" }, bearer(token)));
    }
    expect((await getUser(database(env.DB), eve.user.id))!.name).toBe("Eve");
  });

  it("leaves the tokens of both formats issued after it valid", async () => {
    const fay = await signUp("orig-fay@example.com", { password: "fay-old-secret" });
    const changedAt = await changePassword(fay.user.id, "orig-fay@example.com", "fay-old-secret", "fay-new-secret");
    const versioned = await login("orig-fay@example.com", "fay-new-secret");
    await expectMe(versioned, fay.user);
    await expectMe(await originalToken(fay.user.id, { iat: Math.floor(changedAt.getTime() / 1000) + 1 }), fay.user);
  });

  it("orders whole seconds safely: an original token of the change's own second or earlier is refused", async () => {
    const gus = await signUp("orig-gus@example.com", { password: "gus-old-secret" });
    const changedAt = await changePassword(gus.user.id, "orig-gus@example.com", "gus-old-secret", "gus-new-secret");
    const second = Math.floor(changedAt.getTime() / 1000);
    await expectTokenRefused(await getJson("/users/me", await originalToken(gus.user.id, { iat: second })));
    await expectTokenRefused(await getJson("/users/me", await originalToken(gus.user.id, { iat: second - 1 })));
    await expectMe(await originalToken(gus.user.id, { iat: second + 1 }), gus.user);
  });

  it("is recorded by the migration, for users whose password changed before it, at their last update", async () => {
    const hal = await signUp("orig-hal@example.com", { password: "hal-old-secret" });
    await changePassword(hal.user.id, "orig-hal@example.com", "hal-old-secret", "hal-new-secret");
    const updatedAt = Date.parse("2026-01-02T03:04:05.678Z");
    // The row as it was before the column existed: a raised version, no change time.
    await env.DB.prepare("UPDATE news_users SET password_changed_at = NULL, updated_at = ? WHERE id = ?")
      .bind(updatedAt, hal.user.id)
      .run();
    const backfill = migration
      .split("--> statement-breakpoint")[1]
      .replace(/^--.*$/gm, "")
      .trim();
    await env.DB.prepare(`${backfill.replace(/;$/, "")} AND id = ?`)
      .bind(hal.user.id)
      .run();
    expect((await getUser(database(env.DB), hal.user.id))!.passwordChangedAt).toEqual(new Date(updatedAt));
    const before = Math.floor(updatedAt / 1000);
    await expectTokenRefused(await getJson("/users/me", await originalToken(hal.user.id, { iat: before })));
    await expectMe(await originalToken(hal.user.id, { iat: before + 1 }), hal.user);
  });
});
