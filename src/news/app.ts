// Routes of the news API (spec 2).
import { Hono } from "hono";
import { newsErrorResponse } from "./errors";

export const newsApp = new Hono<{ Bindings: Env }>();
newsApp.onError(newsErrorResponse);
