// An admin's edit that races a delete of the same article: 404, and the delete's tombstone stays.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { deleteArticle } from "../../../src/news/store/articles";
import { database } from "../../../src/shared/db";
import { callJson } from "../../support/worker-http";
import { bearer, signUp, UNKNOWN_ID } from "../../support/news-api";

const story = {
  title: "Race desk story",
  url: "https://desk.example.com/race",
  source: "race-desk",
  abstract: "An edit and a delete at once.",
  publishedAt: "2026-04-10T08:00:00.000Z",
};

const tombstones = async () =>
  (await env.DB.prepare("select count(*) as n from news_article_tombstones").first<{ n: number }>())!.n;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("PUT /news/{id} racing DELETE /news/{id}", () => {
  it("answers 404 when the delete commits between its read and its batch, and keeps the tombstone", async () => {
    const { token } = await signUp("race-admin@example.com", { role: "admin" });
    const created = await callJson("/news", "POST", story, bearer(token));
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const before = await tombstones();

    // The delete commits just before the edit's batch runs, as a concurrent request's would.
    const batch = env.DB.batch.bind(env.DB);
    vi.spyOn(env.DB, "batch").mockImplementationOnce(async (statements) => {
      await deleteArticle(database(env.DB), id, new Date());
      return batch(statements);
    });
    const edited = await callJson(`/news/${id}`, "PUT", { url: "https://desk.example.com/race-2" }, bearer(token));
    expect(edited.status).toBe(404);
    expect(await edited.json()).toEqual(UNKNOWN_ID);
    expect(await tombstones()).toBe(before + 1);
    expect(await env.DB.prepare("select id from articles where id = ?").bind(id).first()).toBeNull();
  });
});
