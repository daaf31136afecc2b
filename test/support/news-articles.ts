// The seeded articles (test/news/articles-fixture.ts) as the news API answers them, for the /news and /search tests.
import { expect } from "vitest";

/** The newest seeded article, Telstra's on abc.net.au, as answered; `id` and `companies` are as each route gives them. */
export const telstraArticleView = (id: unknown, companies: unknown[]) => ({
  id,
  title: "Telstra switches on its 5G network in the outback",
  abstract: "Regional towns get faster mobile data.",
  url: "https://abc.net.au/Telstra%20switches%20on%20its%205G%20network%20in%20the%20outback",
  thumbnail: null,
  source: "abc.net.au",
  publishedAt: "2026-04-01T01:00:00.000Z",
  fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/),
  companies,
  createdAt: "2026-05-01T00:00:00.000Z",
  updatedAt: "2026-05-01T00:00:00.000Z",
});
