// Picture URLs after issue 16: a user's picture and an article's thumbnail (and url) are http(s) only; anything
// else (javascript:, data:, ftp:, no "//") is refused with the validation object and nothing is stored.
import { beforeAll, describe, expect, it } from "vitest";
import type { ArticleView } from "../../../src/news/store/articles";
import { basic, call, callJson } from "../../support/worker-http";
import { bearer, getJson, MASTER_KEY, signUp, type SignedUp } from "../../support/news-api";

const REFUSED = [
  "javascript:alert(document.cookie)",
  "JavaScript:alert(1)",
  "data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+",
  "ftp://files.example.com/me.png",
  "http:example.com/me.png",
  "//example.com/me.png",
];

const refusal = (param: string, value: string) => ({
  valid: false,
  name: "match",
  param,
  value,
  match: "url",
  message: `${param} must be an http(s) URL`,
});

let admin: SignedUp;
let reader: SignedUp;
beforeAll(async () => {
  admin = await signUp("pictures-admin@example.com", { role: "admin" });
  reader = await signUp("pictures-reader@example.com", { name: "Reader" });
});

describe("a user's picture", () => {
  for (const [index, picture] of REFUSED.entries()) {
    it(`is refused at sign-up: ${picture}`, async () => {
      const email = `picture-${index}@example.com`;
      const response = await callJson("/users", "POST", {
        access_token: MASTER_KEY,
        email,
        password: "123456",
        picture,
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual(refusal("picture", picture));
      // Not stored: the address is still free, and logging in with it fails.
      const login = await callJson(
        "/auth",
        "POST",
        { access_token: MASTER_KEY },
        { Authorization: basic(email, "123456") },
      );
      expect(login.status).toBe(401);
    });
  }

  it("is refused on an update, as a form field too, leaving the stored one", async () => {
    const stored = await (await call(`/users/${reader.user.id}`)).json();
    for (const picture of REFUSED) {
      const response = await callJson(`/users/${reader.user.id}`, "PUT", { picture }, bearer(reader.token));
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual(refusal("picture", picture));
    }
    const form = await call(`/users/${reader.user.id}`, {
      method: "PUT",
      headers: { ...bearer(reader.token), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ picture: "javascript:alert(1)" }).toString(),
    });
    expect(form.status).toBe(400);
    expect(await form.json()).toEqual(refusal("picture", "javascript:alert(1)"));
    expect(await (await call(`/users/${reader.user.id}`)).json()).toEqual(stored);
  });

  it("is accepted as http or https, trimmed", async () => {
    const response = await callJson(
      `/users/${reader.user.id}`,
      "PUT",
      { picture: "  http://img.example.com/r.png " },
      bearer(reader.token),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ picture: "http://img.example.com/r.png" });
  });
});

describe("an article's thumbnail and url", () => {
  const story = { title: "Pictures desk story", url: "https://desk.example.com/pictures", source: "pictures-desk" };
  const stored = async () =>
    (await (await getJson("/news?sources=pictures-desk", reader.token)).json()) as ArticleView[];

  it("are refused on create, nothing stored", async () => {
    // A source of its own: the update tests store pictures-desk stories.
    const refused = { ...story, source: "pictures-refused" };
    for (const bad of REFUSED) {
      const thumbnail = await callJson("/news", "POST", { ...refused, thumbnail: bad }, bearer(admin.token));
      expect(thumbnail.status).toBe(400);
      expect(await thumbnail.json()).toEqual(refusal("thumbnail", bad));
      const url = await callJson("/news", "POST", { ...refused, url: bad }, bearer(admin.token));
      expect(url.status).toBe(400);
      expect(await url.json()).toEqual(refusal("url", bad));
    }
    expect(await (await getJson("/news?sources=pictures-refused", reader.token)).json()).toEqual([]);
  });

  it("are refused on update, leaving the stored ones", async () => {
    const created = await callJson(
      "/news",
      "POST",
      { ...story, thumbnail: "https://img.example.com/t.jpg" },
      bearer(admin.token),
    );
    expect(created.status).toBe(201);
    const article = (await created.json()) as ArticleView;
    for (const bad of REFUSED) {
      const response = await callJson(`/news/${article.id}`, "PUT", { thumbnail: bad }, bearer(admin.token));
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual(refusal("thumbnail", bad));
    }
    expect(await stored()).toEqual([article]);
  });
});
