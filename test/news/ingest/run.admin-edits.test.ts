// Ingestion after an admin's delete or edit of an ingested article: the publisher brings the story again on every run
// of its day, and the admin's delete, text and title must stay.
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ingestPublisher } from "../../../src/news/ingest/run";
import { NewsSettings } from "../../../src/news/settings";
import type { ArticleView } from "../../../src/news/store/articles";
import { database } from "../../../src/shared/db";
import { bearer, getJson, signUp } from "../../support/news-api";
import { call, callJson } from "../../support/worker-http";
import { NOW, quietRunLogs, recordedFetch } from "./ingest-fixtures";

const QANTAS = "Qantas ordered to pay $20m over flights it had already cancelled";
const BHP = "BHP lifts iron ore guidance as Chinese steel demand steadies";
const BANKS = "Commonwealth Bank and Westpac pass on only part of the rate cut as mortgage war cools";

/** The recorded Guardian page (the three stories above), ingested `minutes` after NOW. */
const ingestGuardian = (minutes: number) =>
  ingestPublisher(database(env.DB), {
    publisher: "guardian",
    settings: NewsSettings.parse({ GUARDIAN_API_KEY: "guardian-test-key" }),
    fetch: recordedFetch().fetcher,
    now: new Date(NOW.getTime() + minutes * 60_000),
  });

let admin: string;

beforeAll(async () => {
  admin = (await signUp("admin-edits@example.com", { role: "admin" })).token;
});

async function storedByTitle(): Promise<Map<string, ArticleView>> {
  const response = await getJson("/news?limit=100&sources=guardian,admin-desk", admin);
  return new Map(((await response.json()) as ArticleView[]).map((article) => [article.title, article]));
}

quietRunLogs();

describe("ingestion after an admin's changes", () => {
  beforeEach(async () => {
    await env.DB.batch(
      ["article_companies", "articles", "news_ingest_cursors", "news_article_tombstones"].map((table) =>
        env.DB.prepare(`delete from ${table}`),
      ),
    );
    expect((await ingestGuardian(0)).warnings).toEqual(["INFO: guardian: 3 fetched, 3 new, 0 updated, 0 unchanged"]);
  });

  it("does not bring back an article an admin deleted, until an admin posts it again", async () => {
    const qantas = (await storedByTitle()).get(QANTAS)!;
    expect((await call(`/news/${qantas.id}`, { method: "DELETE", headers: bearer(admin) })).status).toBe(204);

    expect((await ingestGuardian(30)).warnings).toEqual([
      "INFO: guardian: 3 fetched, 0 new, 0 updated, 2 unchanged",
      "INFO: guardian: 1 item(s) an admin deleted or retitled left out",
    ]);
    expect([...(await storedByTitle()).keys()].sort()).toEqual([BHP, BANKS]);

    const posted = await callJson(
      "/news",
      "POST",
      { title: QANTAS, url: "https://desk.example.com/qantas", source: "guardian", abstract: "The admin's own words" },
      bearer(admin),
    );
    expect(posted.status).toBe(201);
    expect((await ingestGuardian(60)).warnings).toEqual(["INFO: guardian: 3 fetched, 0 new, 0 updated, 3 unchanged"]);
    expect((await storedByTitle()).get(QANTAS)).toMatchObject({
      url: "https://desk.example.com/qantas",
      abstract: "The admin's own words",
    });
  });

  it("keeps an admin's abstract, url and companies of an ingested article", async () => {
    const bhp = (await storedByTitle()).get(BHP)!;
    const edited = await callJson(
      `/news/${bhp.id}`,
      "PUT",
      { abstract: "Corrected by the desk: Rio Tinto too", url: "https://desk.example.com/bhp" },
      bearer(admin),
    );
    expect(edited.status).toBe(200);
    const afterEdit = (await edited.json()) as ArticleView;
    expect(afterEdit.companies).toEqual(["BHP", "RIO"]);

    expect((await ingestGuardian(30)).warnings).toEqual(["INFO: guardian: 3 fetched, 0 new, 0 updated, 3 unchanged"]);
    expect((await storedByTitle()).get(BHP)).toEqual(afterEdit);
  });

  it("does not store a second copy of an article an admin retitled", async () => {
    const banks = (await storedByTitle()).get(BANKS)!;
    const retitled = await callJson(
      `/news/${banks.id}`,
      "PUT",
      { title: "Big banks keep part of the cut" },
      bearer(admin),
    );
    expect(retitled.status).toBe(200);

    expect((await ingestGuardian(30)).warnings).toEqual([
      "INFO: guardian: 3 fetched, 0 new, 0 updated, 2 unchanged",
      "INFO: guardian: 1 item(s) an admin deleted or retitled left out",
    ]);
    const stored = await storedByTitle();
    expect([...stored.keys()].sort()).toEqual([BHP, "Big banks keep part of the cut", QANTAS]);
    expect(stored.get("Big banks keep part of the cut")!.id).toBe(banks.id);
  });
});
