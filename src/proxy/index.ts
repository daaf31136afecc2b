// The proxy service's face: what the Worker's router and the job registry reach it through.
export { proxyApp } from "./app";
export { proxyErrorResponse } from "./errors";
export { dailyProxyRequests, proxyJobs, queueUnsentSlaveSyncs, settlePendingVersions } from "./jobs";
