// The users and login routes, after the rest generator's conventions: sign-up with the master key, HTTP Basic login
// answered with a JWT, querymen lists of users for admins, and each user's own profile and password.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { database } from "../../shared/db";
import { register } from "../../shared/http/openapi";
import { BASIC_CHALLENGE, BEARER_CHALLENGE, unauthorized } from "../errors";
import { newsSettings } from "../settings";
import { recordNotFound } from "../store/errors";
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
} from "../store/users";
import {
  requireAdmin,
  requireMasterKey,
  requirePassword,
  requireUser,
  secured,
  setSessionCookie,
  type NewsEnv,
} from "./auth";
import { changePasswordExample, signUpExample, updateUserExample } from "./examples";
import { parseSort, selectFields, totalCountHeader } from "./list";
import {
  CreateUser,
  failures,
  formOrJson,
  FullUserView,
  ChangedUserIdParam,
  IdParam,
  json,
  jsonList,
  ListUsersQuery,
  PublicUserView,
  Session,
  UpdatePassword,
  UpdateUser,
} from "./schemas";
import { tokenSigner } from "./tokens";
import { validateNews } from "./validation";

const tags = ["news"];

const signUp = createRoute({
  method: "post",
  path: "/users",
  operationId: "signUp",
  tags,
  summary: "Create a user (master key) and sign them in",
  security: secured("news_master_key"),
  middleware: [requireMasterKey, validateNews("json", CreateUser)],
  request: { body: formOrJson(CreateUser, signUpExample) },
  responses: { 201: json(Session, "the new user and a session token"), ...failures(400, 401, 409, 413) },
});

const login = createRoute({
  method: "post",
  path: "/auth",
  operationId: "signIn",
  tags,
  summary: "Sign in with e-mail and password (and the master key)",
  security: secured("news_master_key", "news_login"),
  middleware: [requireMasterKey, requirePassword],
  responses: { 201: json(Session, "the user and a new session token"), ...failures(400, 401, 413) },
});

const list = createRoute({
  method: "get",
  path: "/users",
  operationId: "listUsers",
  tags,
  summary: "List users (admin)",
  security: secured("news_token"),
  middleware: [requireAdmin, validateNews("query", ListUsersQuery)],
  request: { query: ListUsersQuery },
  responses: { 200: jsonList(FullUserView.array(), "a page of users"), ...failures(400, 401) },
});

const me = createRoute({
  method: "get",
  path: "/users/me",
  operationId: "getSignedInUser",
  tags,
  summary: "The signed-in user",
  security: secured("news_token"),
  middleware: [requireUser()],
  responses: { 200: json(FullUserView, "the signed-in user"), ...failures(401) },
});

const show = createRoute({
  method: "get",
  path: "/users/{id}",
  operationId: "getUser",
  security: [],
  tags,
  summary: "A user's public profile",
  request: { params: IdParam },
  responses: { 200: json(PublicUserView, "the user's id, name and picture"), ...failures(404) },
});

const update = createRoute({
  method: "put",
  path: "/users/{id}",
  operationId: "updateUser",
  tags,
  summary: "Change a user's name or picture (the user, or an admin)",
  security: secured("news_token"),
  middleware: [requireUser(), validateNews("json", UpdateUser)],
  request: { params: ChangedUserIdParam, body: formOrJson(UpdateUser, updateUserExample) },
  responses: { 200: json(FullUserView, "the changed user"), ...failures(400, 401, 404, 413) },
});

const changePassword = createRoute({
  method: "put",
  path: "/users/{id}/password",
  operationId: "changePassword",
  tags,
  summary: "Change one's own password (ends every session issued before)",
  security: secured("news_login"),
  middleware: [requirePassword, validateNews("json", UpdatePassword)],
  request: { params: ChangedUserIdParam, body: formOrJson(UpdatePassword, changePasswordExample) },
  responses: { 200: json(FullUserView, "the user"), ...failures(400, 401, 404, 413) },
});

const remove = createRoute({
  method: "delete",
  path: "/users/{id}",
  operationId: "deleteUser",
  tags,
  summary: "Delete a user (admin)",
  security: secured("news_token"),
  middleware: [requireAdmin],
  request: { params: IdParam },
  // The token may come in the body (access_token), which is read, and refused like any other: 400, 413.
  responses: { 204: { description: "deleted" }, ...failures(400, 401, 404, 413) },
});

/** Registers the /users and /auth routes; the middleware validates bodies and queries the news API's own way. */
export function registerUserRoutes(app: OpenAPIHono<NewsEnv>): void {
  const own = { validation: "middleware" } as const;

  register(
    app,
    signUp,
    async (c) => {
      // The signer first: without JWT_SECRET the sign-up answers 500 naming it and creates no user.
      const sign = tokenSigner(newsSettings(c.env));
      const user = await createUser(database(c.env.DB), { ...c.req.valid("json"), now: new Date() });
      return c.json({ token: await sign(user), user: fullUserView(user) }, 201);
    },
    own,
  );

  register(
    app,
    login,
    async (c) => {
      const user = c.get("user");
      const token = await tokenSigner(newsSettings(c.env))(user);
      setSessionCookie(c, token);
      return c.json({ token, user: fullUserView(user) }, 201);
    },
    own,
  );

  register(
    app,
    list,
    async (c) => {
      const query = c.req.valid("query");
      const sort = parseSort(query.sort, Object.keys(USER_SORT_FIELDS) as (keyof typeof USER_SORT_FIELDS)[]);
      const { rows, total } = await listUsers(database(c.env.DB), { ...query, sort });
      return c.json(selectFields(rows.map(fullUserView), query.fields), 200, totalCountHeader(total));
    },
    own,
  );

  register(app, me, (c) => c.json(fullUserView(c.get("user"))), own);

  registerUserByIdRoutes(app, own);
}

/**
 * The user a change names, as the original found it before it checked who may change it: `me` is the caller, and an id
 * that names no user answers 404 (GET /users/{id} tells as much to anyone).
 */
async function existingUserId(db: D1Database, param: string, caller: { id: string }): Promise<string> {
  const id = param === "me" ? caller.id : param;
  // The caller was read by its authentication; a change of the caller's own row that finds none answers 404 itself.
  if (id !== caller.id && !(await getUser(database(db), id))) throw recordNotFound();
  return id;
}

/** The routes of one user by id: read, update, change the password, delete. */
function registerUserByIdRoutes(app: OpenAPIHono<NewsEnv>, own: { validation: "middleware" }): void {
  register(
    app,
    show,
    async (c) => {
      const user = await getUser(database(c.env.DB), c.req.param("id"));
      if (!user) throw recordNotFound();
      return c.json(publicUserView(user));
    },
    own,
  );

  register(
    app,
    update,
    async (c) => {
      const caller = c.get("user");
      const id = await existingUserId(c.env.DB, c.req.param("id"), caller);
      if (caller.role !== "admin" && caller.id !== id) {
        throw unauthorized("id", "You can't change other user's data", BEARER_CHALLENGE);
      }
      const user = await updateUser(database(c.env.DB), { id, ...c.req.valid("json"), now: new Date() });
      return c.json(fullUserView(user));
    },
    own,
  );

  register(
    app,
    changePassword,
    async (c) => {
      const caller = c.get("user");
      if (caller.id !== (await existingUserId(c.env.DB, c.req.param("id"), caller))) {
        throw unauthorized("password", "You can't change other user's password", BASIC_CHALLENGE);
      }
      const user = await setPassword(database(c.env.DB), {
        id: caller.id,
        password: c.req.valid("json").password,
        now: new Date(),
      });
      return c.json(fullUserView(user));
    },
    own,
  );

  register(
    app,
    remove,
    async (c) => {
      await deleteUser(database(c.env.DB), c.req.param("id"));
      return c.body(null, 204);
    },
    own,
  );
}
