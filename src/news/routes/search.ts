// GET /search, the original product endpoint: articles by topics and companies within a date window, in the
// original's envelope with warnings for what the caller left out.
import { createRoute, type OpenAPIHono, type z } from "@hono/zod-openapi";
import { version } from "../../../package.json";
import { database } from "../../shared/db";
import { register } from "../../shared/http/openapi";
import { SEARCH_DEFAULT_LIMIT, searchArticles, type SearchResult } from "../store/search";
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

/** What the original's envelope names as its maintainer; clients that read the envelope whole find it there. */
const MAINTAINER = "Team Wombat";

/**
 * The original's warnings, in its order (restfulnews src/api/search/controller.js): the window and limit left out, a
 * reversed window, topics and company ids left out, then the company ids that name no company.
 */
function searchWarnings({ query, unknownCompanyIds, windowIsValid }: SearchResult): string[] {
  const warnings: string[] = [];
  if (query.defaulted.startDate) warnings.push("Start time not specified.");
  if (query.defaulted.endDate) warnings.push("End time not specified.");
  if (query.defaulted.limit) warnings.push(`Limit not set, defaulting to limit to ${SEARCH_DEFAULT_LIMIT} articles.`);
  if (!windowIsValid) warnings.push("End date cannot be before start date.");
  if (query.topics.length === 0) warnings.push("Topics not specified.");
  if (query.companyids.length === 0) warnings.push("Company Ids not specified.");
  for (const ticker of unknownCompanyIds) warnings.push(`Company id ${ticker} not found.`);
  return warnings;
}

/** The original's envelope around a search's result, timed from `started` to `ended` (milliseconds). */
function searchEnvelope(result: SearchResult, started: number, ended: number): z.infer<typeof SearchResponse> {
  const { query } = result;
  return {
    status: 200,
    version,
    maintainer: MAINTAINER,
    startTime: new Date(started).toISOString(),
    endTime: new Date(ended).toISOString(),
    elapsedTime: (ended - started) / 1000,
    parameters: {
      topics: query.topics,
      companyids: query.companyids,
      start_date: query.startDate.toISOString(),
      end_date: query.endDate.toISOString(),
      limit: query.limit,
      page: query.page,
    },
    warnings: searchWarnings(result),
    companies: result.companies,
    data: result.rows,
  };
}

/** Registers GET /search; the middleware validates the query the news API's own way. */
export function registerSearchRoute(app: OpenAPIHono<NewsEnv>): void {
  register(
    app,
    search,
    async (c) => {
      const query = c.req.valid("query");
      const started = Date.now();
      const result = await searchArticles(database(c.env.DB), {
        topics: query.topics,
        companyids: query.companyids,
        startDate: query.start_date,
        endDate: query.end_date,
        limit: query.limit,
        page: query.page,
        now: new Date(),
      });
      return c.json(searchEnvelope(result, started, Date.now()), 200, totalCountHeader(result.total));
    },
    { validation: "middleware" },
  );
}
