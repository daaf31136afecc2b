// Routes of the news API (spec 2): users and login after the rest generator's conventions (master key, Basic
// login answered with a JWT, querymen lists), the articles (GET /news and the admin writes) and GET /search.
import { Hono } from "hono";
import { database } from "../shared/db";
import {
  ARTICLE_SORT_FIELDS,
  createArticle,
  deleteArticle,
  ftsQuery,
  getArticle,
  listArticles,
  updateArticle,
  type ArticleSortField,
} from "./articles";
import { requireAdmin, requireMasterKey, requirePassword, requireUser, signToken, type NewsEnv } from "./auth";
import { companyMatcher, listCompanies } from "./companies";
import { NewsError, newsErrorResponse, notFound } from "./errors";
import { parseSort, selectFields, totalCountHeader } from "./list";
import {
  CreateArticle,
  CreateUser,
  ListNewsQuery,
  ListUsersQuery,
  SearchQuery,
  UpdateArticle,
  UpdatePassword,
  UpdateUser,
} from "./schemas";
import { searchArticles } from "./search";
import { newsSettings } from "./settings";
import {
  createUser,
  deleteUser,
  fullUserView,
  getUser,
  listUsers,
  publicUserView,
  setPassword,
  updateUser,
  USER_SORT_FIELDS,
} from "./users";
import { validateNews } from "./validation";

export const newsApp = new Hono<NewsEnv>();
newsApp.onError(newsErrorResponse);

/** Article ids are integers; anything else names no article (404, as an unknown id does). */
function articleId(text: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(text)) throw notFound();
  return Number(text);
}

const articleMatcher = async (db: ReturnType<typeof database>) => companyMatcher(await listCompanies(db));

// ---------------------------------------------------------------------------------------------------------------
// Users and login

newsApp.post("/users", requireMasterKey, validateNews("json", CreateUser), async (c) => {
  const user = await createUser(database(c.env.DB), { ...c.req.valid("json"), now: new Date() });
  return c.json({ token: await signToken(newsSettings(c.env), user), user: fullUserView(user) }, 201);
});

newsApp.post("/auth", requireMasterKey, requirePassword, async (c) => {
  const user = c.get("user");
  return c.json({ token: await signToken(newsSettings(c.env), user), user: fullUserView(user) }, 201);
});

newsApp.get("/users", requireAdmin, validateNews("query", ListUsersQuery), async (c) => {
  const query = c.req.valid("query");
  const sort = parseSort(query.sort, Object.keys(USER_SORT_FIELDS) as (keyof typeof USER_SORT_FIELDS)[]);
  const { rows, total } = await listUsers(database(c.env.DB), { ...query, sort });
  return c.json(selectFields(rows.map(fullUserView), query.fields), 200, totalCountHeader(total));
});

newsApp.get("/users/me", requireUser(), (c) => c.json(fullUserView(c.get("user"))));

newsApp.get("/users/:id", async (c) => {
  const user = await getUser(database(c.env.DB), c.req.param("id"));
  if (!user) throw notFound();
  return c.json(publicUserView(user));
});

newsApp.put("/users/:id", requireUser(), validateNews("json", UpdateUser), async (c) => {
  const caller = c.get("user");
  const id = c.req.param("id");
  if (caller.role !== "admin" && caller.id !== id) {
    throw new NewsError(401, { valid: false, message: "You can't change other user's data" });
  }
  const user = await updateUser(database(c.env.DB), { id, ...c.req.valid("json"), now: new Date() });
  return c.json(fullUserView(user));
});

newsApp.put("/users/:id/password", requirePassword, validateNews("json", UpdatePassword), async (c) => {
  const caller = c.get("user");
  if (caller.id !== c.req.param("id")) {
    throw new NewsError(401, { valid: false, param: "password", message: "You can't change other user's password" });
  }
  const user = await setPassword(database(c.env.DB), {
    id: caller.id,
    password: c.req.valid("json").password,
    now: new Date(),
  });
  return c.json(fullUserView(user));
});

newsApp.delete("/users/:id", requireAdmin, async (c) => {
  await deleteUser(database(c.env.DB), c.req.param("id"));
  return c.body(null, 204);
});

// ---------------------------------------------------------------------------------------------------------------
// Articles

newsApp.get("/news", requireUser(), validateNews("query", ListNewsQuery), async (c) => {
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
});

newsApp.get("/news/:id", requireUser(), async (c) => {
  const article = await getArticle(database(c.env.DB), articleId(c.req.param("id")));
  if (!article) throw notFound();
  return c.json(article);
});

newsApp.post("/news", requireAdmin, validateNews("json", CreateArticle), async (c) => {
  const db = database(c.env.DB);
  const article = await createArticle(db, { ...c.req.valid("json"), now: new Date() }, await articleMatcher(db));
  return c.json(article, 201);
});

newsApp.put("/news/:id", requireAdmin, validateNews("json", UpdateArticle), async (c) => {
  const db = database(c.env.DB);
  const id = articleId(c.req.param("id"));
  const article = await updateArticle(db, { ...c.req.valid("json"), id, now: new Date() }, await articleMatcher(db));
  return c.json(article);
});

newsApp.delete("/news/:id", requireAdmin, async (c) => {
  await deleteArticle(database(c.env.DB), articleId(c.req.param("id")));
  return c.body(null, 204);
});

// ---------------------------------------------------------------------------------------------------------------
// Search

newsApp.get("/search", requireUser(), validateNews("query", SearchQuery), async (c) => {
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
});
