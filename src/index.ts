// The Worker's entry: HTTP through the Hono app, queue batches and cron events through src/jobs.
import { app } from "./app";
import { handleQueue } from "./jobs/queue";
import { handleScheduled } from "./jobs/scheduled";

export { RateLimitCounter } from "../durable-objects/rate-limit-counter";

// `satisfies` keeps the handlers typed while tests can still call worker.queue / worker.scheduled directly.
export default {
  fetch: app.fetch,
  async queue(batch, env, _ctx) {
    await handleQueue(batch, env);
  },
  async scheduled(controller, env, _ctx) {
    await handleScheduled(controller, env);
  },
} satisfies ExportedHandler<Env>;
