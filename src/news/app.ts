// The news API (spec 2): users and login, the articles (/news), /search and the job runs (/news/jobs), each route
// declared once with createRoute; the root app takes their OpenAPI entries into the one document when it mounts this.
import { OpenAPIHono } from "@hono/zod-openapi";
import { newsErrorResponse } from "./errors";
import { registerArticleRoutes } from "./routes/articles";
import { SECURITY_SCHEMES, type NewsEnv } from "./routes/auth";
import { registerJobRoutes } from "./routes/jobs";
import { registerSearchRoute } from "./routes/search";
import { registerUserRoutes } from "./routes/users";

export const newsApp = new OpenAPIHono<NewsEnv>();
newsApp.onError(newsErrorResponse);

for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) {
  newsApp.openAPIRegistry.registerComponent("securitySchemes", name, scheme);
}

// The order matters: /users/me is registered before /users/{id}, /news/jobs before /news/{id}.
registerUserRoutes(newsApp);
registerJobRoutes(newsApp);
registerArticleRoutes(newsApp);
registerSearchRoute(newsApp);
