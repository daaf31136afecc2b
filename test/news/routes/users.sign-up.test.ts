// Sign-up (POST /users, master key only): the view it answers, the stored hash, and each refusal and validation.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { verifyPassword } from "../../../src/shared/passwords";
import { database } from "../../../src/shared/db";
import { findUserByEmail } from "../../../src/news/store/users";
import { call, callJson, postForm } from "../../support/worker-http";
import { bearer, expectRefused, MASTER_KEY, REFUSED, signUp, type SignedUp } from "../../support/news-api";
import { expectNewsError } from "../../support/news-errors";

const encoder = new TextEncoder();

const { masterKey } = REFUSED;

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
