// The Worker's entry: HTTP through the Hono app, queue batches and cron events through src/jobs with the job registry.
import { app } from "./app";
import { handleScheduled } from "./jobs/cron";
import { handleQueue } from "./jobs/queue";
import { registry } from "./job-registry";
import { serveWithD1Usage } from "./shared/d1-usage";
import { configureLogging } from "./shared/log";

export { JobLock } from "../durable-objects/job-lock";
export { KvstoreConnection } from "../durable-objects/kvstore-connection";
export { RateLimitCounter } from "../durable-objects/rate-limit-counter";
export { RateLimitStats } from "../durable-objects/rate-limit-stats";

// `satisfies` keeps the handlers typed while tests can still call worker.queue / worker.scheduled directly.
export default {
  // Typed like app.fetch, which tests call with an env carrying extra variables. D1_USAGE_HEADER on, the request's
  // D1 work is counted and answered in Server-Timing (src/shared/d1-usage.ts).
  fetch(request: Request, env: Env | {}, ctx?: ExecutionContext) {
    configureLogging(env);
    return serveWithD1Usage(env, () => app.fetch(request, env, ctx));
  },
  async queue(batch, env, _ctx) {
    configureLogging(env);
    await handleQueue(batch, env, registry);
  },
  async scheduled(controller, env, _ctx) {
    configureLogging(env);
    await handleScheduled(controller, env, registry);
  },
} satisfies ExportedHandler<Env>;
