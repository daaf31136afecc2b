// The one OpenAPI document's front matter (what the three services are, where they answer, the tags of each) and
// /docs, the page that renders the document with the Swagger UI files the Worker serves from its own origin
// (wrangler.toml [assets], filled by scripts/copy-swagger-ui.mjs), so that the reference works with no internet.
import type { Context } from "hono";

export const DOCUMENT_PATH = "/openapi.json";
export const DOCS_PATH = "/docs";

const TITLE = "Edge control plane API";

const PROXY = "Proxy configuration API";
const NEWS = "News API";
const RATELIMIT = "Rate limit service";

/** Every tag, grouped by the service whose routes carry it (the proxy's tags are those of its original spec). */
const TAGS_BY_SERVICE: Record<string, Record<string, string>> = {
  [PROXY]: {
    test: "Availability checks",
    projects: "The projects a caller may access, and one project's tree",
    domains: "The domains of a project or backend, and the all-or-nothing mass update",
    containers: "Containers of a project",
    backends: "Backends of a project, and the blue/green switch of their containers",
    admin: "Administrator only: projects, hosts, API users, console/SSH users, SSH permissions",
    jobs: "The HAProxy, SSH proxy and certificate jobs, their history, the generated versions and the certificates",
    operations:
      "Administrator only: previews of the next configuration, rollback to a stored version, the load balancers' drift, metrics",
  },
  [NEWS]: { news: "Sign-up, sign-in, users, articles about Australian companies and the search" },
  [RATELIMIT]: {
    ratelimit: "ShouldRateLimit over HTTP JSON and Connect/gRPC-Web, health, configuration and statistics",
  },
};

/**
 * The order in which the request body examples build on one another (a project before its containers, a user before
 * their token's routes); test/integration/openapi-examples.test.ts sends them in this order and checks the list.
 */
const EXAMPLE_ORDER = [
  "POST /admin/projects",
  "POST /admin/hosts",
  "POST /containers/{projectLabel}",
  "POST /backends/{projectLabel}",
  "PUT /admin/certificates/{name}",
  "POST /domains/massupdate",
  "PUT /admin/zones/{name}",
  "POST /admin/apiusers",
  "POST /admin/users",
  "PUT /admin/containers/{projectLabel}/{containerLabel}/permissions",
  "POST /users",
  "PUT /users/{id}",
  "POST /news",
  "PUT /news/{id}",
  "PUT /users/{id}/password",
  "POST /json",
  "PUT /rlconfig/files",
  "PUT /rlconfig/files/{name}",
  "POST /rlconfig/validate",
  "POST /rlconfig/validate/{name}",
  "POST /envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
];

const DESCRIPTION = `One Cloudflare Worker serves three services; their paths do not collide.

- **${PROXY}** (tags ${Object.keys(TAGS_BY_SERVICE[PROXY]).join(", ")}): projects, backends, containers and domains \
of the HAProxy and SSH proxy installation, and the jobs that generate their configuration. HTTP Basic (\`user_auth\`).
- **${NEWS}** (tag news): users, JWT sign-in and news about Australian companies. Sign-up and sign-in need the master \
key (\`news_master_key\`), the other routes a session token (\`news_token\`); either may also be sent as \
\`access_token\` in the query or the body.
- **${RATELIMIT}** (tag ratelimit): Envoy-compatible rate limit decisions (POST /json, and ShouldRateLimit over \
Connect and gRPC-Web; plain gRPC goes through the Node gateway, grpc-gateway/). The configuration and statistics \
routes need the \`RATELIMIT_ADMIN_TOKEN\` bearer (\`ratelimitAdminToken\`).

Each service answers errors in its own shape; every operation's responses name it.

## Trying the examples

Every request body has an example that "Try it out" fills in, and every path parameter one but a news user's id \
(\`user.id\` in the answer of POST /users). Against \`npm start\`, authorize with the local values of \
.dev.vars.example: \`user_auth\` as PROXY_ADMIN_USERNAME with PROXY_ADMIN_PASSWORD, \`news_master_key\` with \
MASTER_KEY, \`news_token\` with the \`token\` of POST /users, \`news_login\` with the example user's e-mail and \
password, \`ratelimitAdminToken\` with RATELIMIT_ADMIN_TOKEN. On a fresh start the examples succeed in this order \
(each service's steps apart from the others'):

${EXAMPLE_ORDER.map((step, index) => `${index + 1}. \`${step}\``).join("\n")}`;

/** The document's fields besides its paths and components (app.doc31 adds those from the registered routes). */
export function documentConfig(version: string) {
  return {
    openapi: "3.1.0",
    info: { title: TITLE, version, description: DESCRIPTION },
    servers: [{ url: "/", description: "The Worker that serves this document" }],
    // Swagger UI shows a tag's description beside it, and knows no groups: the description names the service.
    tags: Object.entries(TAGS_BY_SERVICE).flatMap(([service, tags]) =>
      Object.entries(tags).map(([name, description]) => ({ name, description: `${service}: ${description}` })),
    ),
    // Redoc and Redocly show the tags under their service; Swagger UI ignores the extension.
    "x-tagGroups": Object.entries(TAGS_BY_SERVICE).map(([name, tags]) => ({ name, tags: Object.keys(tags) })),
  };
}

/**
 * The page loads nothing but the Worker's own files, and its policy says so: no tag injected into it can pull in a
 * script or a style from another origin, nor an inline one. The data: images are the icons in Swagger UI's CSS.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${TITLE}</title>
    <link rel="stylesheet" href="/swagger-ui/swagger-ui.css" />
    <link rel="icon" type="image/png" href="/swagger-ui/favicon-32x32.png" />
  </head>
  <body>
    <div id="swagger-ui" data-url="${DOCUMENT_PATH}"></div>
    <script src="/swagger-ui/swagger-ui-bundle.js"></script>
    <script src="/docs/swagger-initializer.js"></script>
  </body>
</html>
`;

export const docsPage = (c: Context) => c.html(PAGE, 200, { "Content-Security-Policy": CONTENT_SECURITY_POLICY });
