// GET /search, the original product endpoint: articles by topics and companies within a date window, in the
// original's envelope with warnings for what the caller left out.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { database } from "../../shared/db";
import { register } from "../../shared/http/openapi";
import { searchArticles } from "../store/search";
import { requireUser, secured, type NewsEnv } from "./auth";
import { totalCountHeader } from "./list";
import { failures, jsonList, SearchQuery, SearchResponse } from "./schemas";
import { validateNews } from "./validation";

const search = createRoute({
  method: "get",
  path: "/search",
  operationId: "searchArticles",
  tags: ["news"],
  summary: "Articles by topics and companies within a date window",
  security: secured("news_token"),
  middleware: [requireUser(), validateNews("query", SearchQuery)],
  request: { query: SearchQuery },
  responses: {
    200: jsonList(SearchResponse, "the matching articles and the companies asked for"),
    ...failures(400, 401),
  },
});

/** Registers GET /search; the middleware validates the query the news API's own way. */
export function registerSearchRoute(app: OpenAPIHono<NewsEnv>): void {
  register(
    app,
    search,
    async (c) => {
      const query = c.req.valid("query");
      const { body, total } = await searchArticles(database(c.env.DB), {
        topics: query.topics,
        companyids: query.companyids,
        startDate: query.start_date,
        endDate: query.end_date,
        limit: query.limit,
        page: query.page,
        now: new Date(),
      });
      return c.json(body, 200, totalCountHeader(total));
    },
    { validation: "middleware" },
  );
}
