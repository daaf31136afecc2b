// How often and how late the queue delivers a job run again: the consumer's retries, and the settings that must
// outlast them (a queued run waiting for its retry is not a lost one).

/** Must match max_retries + 1 of the consumer in wrangler.toml: the last attempt records the failure. */
export const MAX_ATTEMPTS = 6;

/** 30 s, 60 s, 120 s ... capped at one hour. */
export const retryDelaySeconds = (attempts: number) => Math.min(30 * 2 ** Math.max(0, attempts - 1), 3600);

/** The longest a queued run waits for its next delivery: the delay before its last attempt. */
export const LONGEST_RETRY_DELAY_MS = retryDelaySeconds(MAX_ATTEMPTS - 1) * 1000;
