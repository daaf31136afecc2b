// The news service's face: its app and error shape, and its ingestion job with the messages its cron schedule queues.
export { newsApp } from "./app";
export { newsErrorResponse } from "./errors";
export { newsIngestJob, newsIngestRequests } from "./ingest/job";
export { newsSettings } from "./settings";
