// The /news routes: signed-in users list and read articles (full-text search and filters, querymen lists), admins
// create, update and delete them, with companies linked by the matcher plus the ones they name.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { database, type Database } from "../../shared/db";
import { register } from "../../shared/http/openapi";
import {
  ARTICLE_SORT_FIELDS,
  createArticle,
  deleteArticle,
  getArticle,
  listArticles,
  updateArticle,
  type ArticleSortField,
} from "../store/articles";
import { companyMatcher, listCompanies } from "../store/companies";
import { recordNotFound } from "../store/errors";
import { ftsQuery } from "../store/full-text";
import { requireAdmin, requireUser, secured, type NewsEnv } from "./auth";
import { createArticleExample, updateArticleExample } from "./examples";
import { parseSort, selectFields, totalCountHeader } from "./list";
import {
  ArticleIdParam,
  ArticleView,
  CreateArticle,
  failures,
  formOrJson,
  json,
  jsonList,
  ListNewsQuery,
  UpdateArticle,
} from "./schemas";
import { validateNews } from "./validation";

/** Article ids are integers; anything else names no article (404, as an unknown id does). */
function articleId(text: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(text)) throw recordNotFound();
  return Number(text);
}

const articleMatcher = async (db: Database) => companyMatcher(await listCompanies(db));

const tags = ["news"];

const list = createRoute({
  method: "get",
  path: "/news",
  operationId: "listArticles",
  tags,
  summary: "List articles: full-text q, companies, sources and a date window",
  security: secured("news_token"),
  middleware: [requireUser(), validateNews("query", ListNewsQuery)],
  request: { query: ListNewsQuery },
  responses: { 200: jsonList(ArticleView.array(), "a page of articles"), ...failures(400, 401) },
});

const show = createRoute({
  method: "get",
  path: "/news/{id}",
  operationId: "getArticle",
  tags,
  summary: "One article",
  security: secured("news_token"),
  middleware: [requireUser()],
  request: { params: ArticleIdParam },
  responses: { 200: json(ArticleView, "the article"), ...failures(401, 404) },
});

const create = createRoute({
  method: "post",
  path: "/news",
  operationId: "createArticle",
  tags,
  summary: "Create an article (admin)",
  security: secured("news_token"),
  middleware: [requireAdmin, validateNews("json", CreateArticle)],
  request: { body: formOrJson(CreateArticle, createArticleExample) },
  responses: { 201: json(ArticleView, "the new article"), ...failures(400, 401, 409, 413) },
});

const update = createRoute({
  method: "put",
  path: "/news/{id}",
  operationId: "updateArticle",
  tags,
  summary: "Change an article (admin)",
  security: secured("news_token"),
  middleware: [requireAdmin, validateNews("json", UpdateArticle)],
  request: { params: ArticleIdParam, body: formOrJson(UpdateArticle, updateArticleExample) },
  responses: { 200: json(ArticleView, "the changed article"), ...failures(400, 401, 404, 409, 413) },
});

const remove = createRoute({
  method: "delete",
  path: "/news/{id}",
  operationId: "deleteArticle",
  tags,
  summary: "Delete an article (admin)",
  security: secured("news_token"),
  middleware: [requireAdmin],
  request: { params: ArticleIdParam },
  // The token may come in the body (access_token), which is read, and refused like any other: 400, 413.
  responses: { 204: { description: "deleted" }, ...failures(400, 401, 404, 413) },
});

/** Registers the /news routes; the middleware validates bodies and queries the news API's own way. */
export function registerArticleRoutes(app: OpenAPIHono<NewsEnv>): void {
  const own = { validation: "middleware" } as const;

  register(
    app,
    list,
    async (c) => {
      const query = c.req.valid("query");
      const sort = parseSort(query.sort, Object.keys(ARTICLE_SORT_FIELDS) as ArticleSortField[]);
      const { rows, total } = await listArticles(database(c.env.DB), {
        // A q with no searchable word (only punctuation) matches nothing rather than everything.
        match: query.q ? (ftsQuery(query.q) ?? null) : undefined,
        tickers: query.companies,
        sources: query.sources,
        from: query.from,
        to: query.to,
        page: query.page,
        limit: query.limit,
        sort,
      });
      return c.json(selectFields(rows, query.fields), 200, totalCountHeader(total));
    },
    own,
  );

  register(
    app,
    show,
    async (c) => {
      const article = await getArticle(database(c.env.DB), articleId(c.req.param("id")));
      if (!article) throw recordNotFound();
      return c.json(article);
    },
    own,
  );

  registerArticleWrites(app, own);
}

/** The writes of /news: create, update and delete. */
function registerArticleWrites(app: OpenAPIHono<NewsEnv>, own: { validation: "middleware" }): void {
  register(
    app,
    create,
    async (c) => {
      const db = database(c.env.DB);
      const article = await createArticle(db, { ...c.req.valid("json"), now: new Date() }, await articleMatcher(db));
      return c.json(article, 201);
    },
    own,
  );

  register(
    app,
    update,
    async (c) => {
      const db = database(c.env.DB);
      const id = articleId(c.req.param("id"));
      const article = await updateArticle(
        db,
        { ...c.req.valid("json"), id, now: new Date() },
        await articleMatcher(db),
      );
      return c.json(article);
    },
    own,
  );

  register(
    app,
    remove,
    async (c) => {
      await deleteArticle(database(c.env.DB), articleId(c.req.param("id")), new Date());
      return c.body(null, 204);
    },
    own,
  );
}
