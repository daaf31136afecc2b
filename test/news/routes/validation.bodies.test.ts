// Request bodies of the news API after issue 16: every body a route reads is capped by NEWS_MAX_BODY_BYTES (413),
// must be UTF-8 whatever its type (400, never silently replaced), and may nest at most MAX_JSON_DEPTH levels.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../../../src/app";
import type { ArticleView } from "../../../src/news/store/articles";
import { findUserByEmail } from "../../../src/news/store/users";
import { MAX_JSON_DEPTH } from "../../../src/news/routes/validation";
import { database } from "../../../src/shared/db";
import { basic, call, callJson } from "../../support/worker-http";
import { bearer, getJson, MASTER_KEY, signUp, type SignedUp } from "../../support/news-api";
import { expectNewsError } from "../../support/news-errors";
import { bytes } from "../../support/byte-strings";

const MIB = 1024 * 1024;
const encoder = new TextEncoder();

const tooLarge = (limit: number) => ({
  valid: false,
  name: "maxbytes",
  param: "body",
  maxbytes: limit,
  message: `request body is larger than ${limit} bytes (the limit set by NEWS_MAX_BODY_BYTES)`,
});
const NOT_UTF8 = { valid: false, name: "utf8", param: "body", message: "request body is not valid UTF-8" };
const FIELD_NOT_UTF8 = { valid: false, name: "utf8", param: "body", message: "a form field is not valid UTF-8" };

const stored = (email: string) => findUserByEmail(database(env.DB), email);

/** A sign-up as JSON of exactly `size` bytes, padded in a field the API ignores. */
function signUpJsonOfSize(email: string, size: number): string {
  const base = JSON.stringify({ access_token: MASTER_KEY, email, password: "123456", padding: "" });
  return JSON.stringify({
    access_token: MASTER_KEY,
    email,
    password: "123456",
    padding: "x".repeat(size - base.length),
  });
}

/** Calls the app with another NEWS_MAX_BODY_BYTES (settings are read per env object). */
const withLimit = (limit: number, path: string, init: RequestInit) =>
  app.request(path, init, { ...env, NEWS_MAX_BODY_BYTES: String(limit) });

/** POST /users with a body of this type, through the Worker or, given a limit, the app with that NEWS_MAX_BODY_BYTES. */
const postUsers = (type: string, body: BodyInit, limit?: number) => {
  const init = { method: "POST", headers: { "content-type": type }, body };
  return limit === undefined ? call("/users", init) : withLimit(limit, "/users", init);
};

const multipart = (boundary: string, fields: Record<string, string | number[]>) =>
  bytes(
    ...Object.entries(fields).flatMap(([name, value]) => [
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`,
      value,
      "\r\n",
    ]),
    `--${boundary}--\r\n`,
  );

let admin: SignedUp;
let reader: SignedUp;
beforeAll(async () => {
  admin = await signUp("bodies-admin@example.com", { role: "admin" });
  reader = await signUp("bodies-reader@example.com", { password: "reader-secret" });
});

describe("NEWS_MAX_BODY_BYTES", () => {
  it("is 1 MiB by default: one byte more is refused with 413 and nothing is stored, the limit itself is accepted", async () => {
    const over = await postUsers("application/json", signUpJsonOfSize("big@example.com", MIB + 1));
    expect(over.status).toBe(413);
    expect(await over.json()).toEqual(tooLarge(MIB));
    expect(await stored("big@example.com")).toBeUndefined();

    const at = await postUsers("application/json", signUpJsonOfSize("big@example.com", MIB));
    expect(at.status).toBe(201);
  });

  it("refuses a streamed body without Content-Length once it passes the limit", async () => {
    const chunk = encoder.encode("x".repeat(40));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(
          encoder.encode(
            `{"access_token":"${MASTER_KEY}","email":"stream@example.com","password":"123456","padding":"`,
          ),
        );
        for (let i = 0; i < 10; i++) controller.enqueue(chunk);
        controller.enqueue(encoder.encode('"}'));
        controller.close();
      },
    });
    const response = await postUsers("application/json", stream, 200);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual(tooLarge(200));
    expect(await stored("stream@example.com")).toBeUndefined();
  });

  it("applies to every route that reads a body, before the master key or the validator, writing nothing", async () => {
    const created = await callJson(
      "/news",
      "POST",
      { title: "Body limit story", url: "https://desk.example.com/limit", source: "limit-desk" },
      bearer(admin.token),
    );
    const article = (await created.json()) as ArticleView;
    const padding = "x".repeat(100);
    const json = (body: Record<string, unknown>, headers: Record<string, string> = {}) => ({
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ ...body, padding }),
    });
    const routes: [string, string, { headers: Record<string, string>; body: string }][] = [
      ["POST", "/users", json({ access_token: MASTER_KEY, email: "limited@example.com", password: "123456" })],
      [
        "POST",
        "/auth",
        json({ access_token: MASTER_KEY }, { Authorization: basic("bodies-reader@example.com", "reader-secret") }),
      ],
      ["PUT", `/users/${reader.user.id}`, json({ name: "Limited" }, bearer(reader.token))],
      [
        "PUT",
        `/users/${reader.user.id}/password`,
        json({ password: "limited-secret" }, { Authorization: basic("bodies-reader@example.com", "reader-secret") }),
      ],
      [
        "POST",
        "/news",
        json(
          { title: "Limited story", url: "https://desk.example.com/limited", source: "limit-desk" },
          bearer(admin.token),
        ),
      ],
      ["PUT", `/news/${article.id}`, json({ title: "Limited title" }, bearer(admin.token))],
      ["DELETE", `/news/${article.id}`, json({ access_token: admin.token })],
      ["DELETE", `/users/${reader.user.id}`, json({ access_token: admin.token })],
    ];
    for (const [method, path, init] of routes) {
      const response = await withLimit(100, path, { method, ...init });
      expect(response.status, `${method} ${path}`).toBe(413);
      expect(await response.json()).toEqual(tooLarge(100));
    }
    expect(await stored("limited@example.com")).toBeUndefined();
    expect(await (await getJson("/users/me", reader.token)).json()).toEqual(reader.user);
    expect(await (await getJson("/news?sources=limit-desk", reader.token)).json()).toEqual([article]);
  });

  it("applies to URL-encoded and multipart forms", async () => {
    const form = new URLSearchParams({
      access_token: MASTER_KEY,
      email: "form-big@example.com",
      password: "123456",
      padding: "x".repeat(200),
    });
    const encoded = await postUsers("application/x-www-form-urlencoded", form.toString(), 200);
    expect(encoded.status).toBe(413);
    expect(await encoded.json()).toEqual(tooLarge(200));
    const parts = multipart("b0undary", {
      access_token: MASTER_KEY,
      email: "form-big@example.com",
      password: "123456",
      padding: "x".repeat(200),
    });
    const multi = await postUsers("multipart/form-data; boundary=b0undary", parts, 200);
    expect(multi.status).toBe(413);
    expect(await multi.json()).toEqual(tooLarge(200));
    expect(await stored("form-big@example.com")).toBeUndefined();
  });
});

describe("UTF-8", () => {
  const cases: [string, string, Uint8Array, object][] = [
    [
      "a JSON body with a 0xFF byte",
      "application/json",
      bytes(`{"access_token":"${MASTER_KEY}","email":"u1@example.com","password":"123456","name":"`, [0xff], '"}'),
      NOT_UTF8,
    ],
    [
      "a JSON body with an overlong encoding of /",
      "application/json",
      bytes(
        `{"access_token":"${MASTER_KEY}","email":"u2@example.com","password":"123456","name":"`,
        [0xc0, 0xaf],
        '"}',
      ),
      NOT_UTF8,
    ],
    [
      "a JSON body with an encoded surrogate",
      "application/json",
      bytes(
        `{"access_token":"${MASTER_KEY}","email":"u3@example.com","password":"123456","name":"`,
        [0xed, 0xa0, 0x80],
        '"}',
      ),
      NOT_UTF8,
    ],
    [
      "a JSON body with a truncated sequence",
      "application/json",
      bytes(
        `{"access_token":"${MASTER_KEY}","email":"u4@example.com","password":"123456","name":"`,
        [0xe2, 0x82],
        '"}',
      ),
      NOT_UTF8,
    ],
    [
      "a JSON body escaping a lone surrogate",
      "application/json",
      bytes(`{"access_token":"${MASTER_KEY}","email":"u5@example.com","password":"123456","name":"\\ud800"}`),
      NOT_UTF8,
    ],
    [
      "a URL-encoded form with a raw 0xFF byte",
      "application/x-www-form-urlencoded",
      bytes(`access_token=${MASTER_KEY}&email=u6%40example.com&password=123456&name=`, [0xff]),
      NOT_UTF8,
    ],
    [
      "a URL-encoded form escaping a 0xFF byte",
      "application/x-www-form-urlencoded",
      bytes(`access_token=${MASTER_KEY}&email=u7%40example.com&password=123456&name=%FF`),
      FIELD_NOT_UTF8,
    ],
    [
      "a URL-encoded form escaping a surrogate",
      "application/x-www-form-urlencoded",
      bytes(`access_token=${MASTER_KEY}&email=u8%40example.com&password=123456&name=%ED%A0%80`),
      FIELD_NOT_UTF8,
    ],
    [
      "a multipart form with a 0xFF byte",
      "multipart/form-data; boundary=xyz",
      multipart("xyz", { access_token: MASTER_KEY, email: "u9@example.com", password: "123456", name: [0x41, 0xff] }),
      NOT_UTF8,
    ],
  ];
  for (const [label, type, body, expected] of cases) {
    it(`refuses ${label} with 400, storing nothing`, async () => {
      const response = await postUsers(type, body);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual(expected);
      const email = /email=([a-z0-9]+)%40|"email":"([a-z0-9]+)@|name="email"\r\n\r\n([a-z0-9]+)@/.exec(
        new TextDecoder().decode(body),
      )!;
      expect(await stored(`${email[1] ?? email[2] ?? email[3]}@example.com`)).toBeUndefined();
    });
  }

  it("keeps well-formed text intact in JSON, URL-encoded and multipart bodies", async () => {
    const name = "Zoë 😀 100%";
    const viaJson = await callJson("/users", "POST", {
      access_token: MASTER_KEY,
      email: "zoe1@example.com",
      password: "123456",
      name,
    });
    const viaForm = await postUsers(
      "application/x-www-form-urlencoded",
      // A % that starts no escape stays literal, as browsers and URLSearchParams read it.
      `access_token=${MASTER_KEY}&email=zoe2%40example.com&password=123456&name=Zo%C3%AB+%F0%9F%98%80+100%`,
    );
    const viaMultipart = await postUsers(
      "multipart/form-data; boundary=zz",
      multipart("zz", { access_token: MASTER_KEY, email: "zoe3@example.com", password: "123456", name }),
    );
    for (const response of [viaJson, viaForm, viaMultipart]) {
      expect(response.status).toBe(201);
      expect(((await response.json()) as SignedUp).user.name).toBe(name);
    }
  });

  it("refuses a multipart body that does not parse with 400", async () => {
    const response = await postUsers(
      "multipart/form-data",
      `access_token=${MASTER_KEY}&email=nob%40example.com&password=123456`,
    );
    await expectNewsError(response, 400, "form", "body", "body must be valid multipart/form-data");
    expect(await stored("nob@example.com")).toBeUndefined();
  });
});

describe("JSON nesting", () => {
  /** `levels` objects, each inside the one before. */
  const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;
  const withExtra = (email: string, levels: number) =>
    `{"access_token":"${MASTER_KEY}","email":"${email}","password":"123456","extra":${nested(levels)}}`;

  it(`refuses a body nested deeper than ${MAX_JSON_DEPTH} levels with 400, storing nothing`, async () => {
    for (const levels of [MAX_JSON_DEPTH, 100_000]) {
      const response = await callJson("/users", "POST", withExtra("deep@example.com", levels));
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        valid: false,
        name: "depth",
        param: "body",
        depth: MAX_JSON_DEPTH,
        message: `body must not nest deeper than ${MAX_JSON_DEPTH} levels`,
      });
    }
    expect(await stored("deep@example.com")).toBeUndefined();
  });

  it(`accepts ${MAX_JSON_DEPTH} levels`, async () => {
    const response = await callJson("/users", "POST", withExtra("deep-ok@example.com", MAX_JSON_DEPTH - 1));
    expect(response.status).toBe(201);
  });
});
