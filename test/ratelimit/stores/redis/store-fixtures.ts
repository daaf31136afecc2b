// What the key-value store suites share: their rules (the decision suite's plus per-second and daily ones) and the
// Worker over the suite's redis-server (started by test/global-setup.ts).
import { env } from "cloudflare:workers";
import { DECISION_CONFIG } from "../../../support/ratelimit-decision-suite";
import { workerWith } from "../../../support/ratelimit-stores";

export const CONFIG =
  DECISION_CONFIG +
  `
  - key: burst
    rate_limit:
      unit: second
      requests_per_unit: 5
  - key: daily
    rate_limit:
      unit: day
      requests_per_unit: 10
`;

export const URL = `127.0.0.1:${env.TEST_REDIS_PORT}`;

/** The Worker over the suite's redis-server, with these settings besides. */
export const redisWorker = (vars: Record<string, string>) =>
  workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: URL, ...vars });
