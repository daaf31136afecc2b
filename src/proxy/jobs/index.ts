// The proxy's jobs, as the rest of the proxy uses them: definitions (and the queued runs), locks, run views, and the
// runs API calls start.
export {
  auditPruneJob,
  certificatesJob,
  dailyProxyRequests,
  genSyncJob,
  proxyJobs,
  runCertificateJob,
  runQueuedGenSync,
  runSshProxyJob,
  slaveSyncJob,
  sshProxyJob,
} from "./definitions";
export { CONFIG_LOCK, MAINTENANCE_LOCK } from "./locks";
export { queueUnsentSlaveSyncs, settlePendingVersions } from "./sweep";
export { getProxyJob, listProxyJobs, PROXY_JOB_KINDS, type ProxyJobKind } from "./runs";
export { settleUnknownVersionsNow } from "./settle-runs";
export {
  runGenSyncForCaller,
  runGenSyncFromApi,
  runHaproxyRestoreFromApi,
  runSshProxyRestoreFromApi,
  startDetachedJob,
  warningsFor,
} from "./api-runs";
