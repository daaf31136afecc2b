// HTTP routes of the rate limit service (the reference's HTTP server and debug server on one origin).
import { Hono } from "hono";
import { ratelimitErrorResponse } from "./errors";

export const ratelimitApp = new Hono<{ Bindings: Env }>();
ratelimitApp.onError(ratelimitErrorResponse);
