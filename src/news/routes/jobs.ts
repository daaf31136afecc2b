// GET /news/jobs: the news API's job runs (ingestion from each publisher) for its admins, newest first, as the proxy
// lists its own at /admin/jobs. A run says when it was queued, started and ended, its counts and why it failed.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { database } from "../../shared/db";
import { register } from "../../shared/http/openapi";
import { countJobRuns, jobRunView, listJobRuns } from "../../jobs/history";
import { newsIngestJob } from "../ingest/job";
import { requireAdmin, secured, type NewsEnv } from "./auth";
import { totalCountHeader } from "./list";
import { failures, jsonList, ListJobRunsQuery, NewsJobRunView } from "./schemas";
import { validateNews } from "./validation";

/** The job kinds of the news API. */
export const NEWS_JOB_KINDS = [newsIngestJob.kind];

const list = createRoute({
  method: "get",
  path: "/news/jobs",
  operationId: "listNewsJobRuns",
  tags: ["news"],
  summary: "Runs of the news jobs (ingestion), newest first (admin)",
  description:
    "A bare JSON array with the total in `X-Total-Count`; `page` (from 1) and `limit` (1 to 100, default 30) page it.",
  security: secured("news_token"),
  middleware: [requireAdmin, validateNews("query", ListJobRunsQuery)],
  request: { query: ListJobRunsQuery },
  responses: { 200: jsonList(NewsJobRunView.array(), "a page of job runs"), ...failures(400, 401) },
});

/** Registers GET /news/jobs; before /news/{id}, which would otherwise take the path. */
export function registerJobRoutes(app: OpenAPIHono<NewsEnv>): void {
  register(
    app,
    list,
    async (c) => {
      const { page, limit } = c.req.valid("query");
      const db = database(c.env.DB);
      const [rows, total] = await Promise.all([
        listJobRuns(db, { kinds: NEWS_JOB_KINDS, limit, offset: (page - 1) * limit }),
        countJobRuns(db, { kinds: NEWS_JOB_KINDS }),
      ]);
      return c.json(rows.map(jobRunView), 200, totalCountHeader(total));
    },
    { validation: "middleware" },
  );
}
