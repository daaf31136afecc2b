// Routes of the "projects" tag: the projects a caller may access, and one project's tree.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { database } from "../../shared/db";
import { register } from "../../shared/http/openapi";
import { listProjectLabels, loadProjectState, resolveProject } from "../installation/projects";
import { requireBasicAuth, type ProxyEnv } from "./auth";
import { treeForApiUser } from "../installation/views";
import { jsonResponse } from "./json";
import { basicAuth, json, labelParams, pick } from "./openapi";
import { ListOfProjects, Project, ProjectDeployment } from "./schemas";
import { deploymentOf } from "../haproxy/versions";

const listRoute = createRoute({
  method: "get",
  path: "/projects",
  operationId: "listProjects",
  tags: ["projects"],
  summary: "Labels of the projects the caller may access, sorted",
  security: basicAuth,
  middleware: [requireBasicAuth],
  responses: { 200: json(ListOfProjects, "project labels"), ...pick(401) },
});

const getRoute = createRoute({
  method: "get",
  path: "/projects/{projectLabel}",
  operationId: "getProject",
  tags: ["projects"],
  summary: "A project with its backends (domains, container references) and containers (host, permissions)",
  security: basicAuth,
  middleware: [requireBasicAuth],
  request: { params: labelParams("projectLabel") },
  responses: {
    200: {
      ...json(Project, "the project"),
      headers: {
        ETag: {
          description:
            "changes whenever anything of the project changes (its backends, containers, domains, links); the " +
            "project's writes take it in If-Match",
          schema: { type: "string" as const },
        },
      },
    },
    ...pick(401, 404),
  },
});

const deploymentRoute = createRoute({
  method: "get",
  path: "/projects/{projectLabel}/deployment",
  operationId: "getProjectDeployment",
  tags: ["projects"],
  summary: "What the HAProxy version in force wrote without, or left out, of the project's backends, and why",
  description:
    "A backend the load balancer's `haproxy -c` refused is left out of the configuration (its domains answer 503) " +
    "while every other backend deploys; this is where its project reads that, with HAProxy's reason.",
  security: basicAuth,
  middleware: [requireBasicAuth],
  request: { params: labelParams("projectLabel") },
  responses: { 200: json(ProjectDeployment, "the version in force and this project's problems"), ...pick(401, 404) },
});

export function registerProjectRoutes(app: OpenAPIHono<ProxyEnv>): void {
  register(app, listRoute, async (c) => jsonResponse(c, await listProjectLabels(database(c.env.DB), c.get("caller"))));
  register(app, getRoute, async (c) => {
    const db = database(c.env.DB);
    const caller = c.get("caller");
    const project = await resolveProject(db, caller, c.req.param("projectLabel")!);
    const { tree, etag } = await loadProjectState(db, project);
    c.header("ETag", etag);
    return jsonResponse(c, caller.isAdmin ? tree : treeForApiUser(tree));
  });
  register(app, deploymentRoute, async (c) => {
    const db = database(c.env.DB);
    const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel")!);
    return jsonResponse(c, await deploymentOf(db, project.label), 200, { keepNulls: true });
  });
}
