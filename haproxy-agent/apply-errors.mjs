// What an apply that did not go through answers, and what its push's record becomes: a refusal (the previous files
// restored, or which could not be), a push stopped or stale, a reload that did not end in time (no verdict), or a
// check stopped with the agent.
import { ApplyError } from "./bundle.mjs";
import { SwapError } from "./config-files.mjs";

/**
 * What a failed swap or reload left in force, for its error: the previous configuration, or the entries that could
 * not be put back (their previous version is still in .previous, where the next push's swap would discard it).
 * @param {string[]} unrestored
 */
export const restored = (unrestored) =>
  unrestored.length === 0
    ? "the previous configuration was restored"
    : `the previous configuration could not be restored: ${unrestored.join(", ")} could not be put back ` +
      "(the previous version is in .previous)";

/** A file system error's code (EIO, ENOSPC), for an answer. @param {unknown} error */
const errorCode = (error) => /** @type {NodeJS.ErrnoException} */ (error)?.code ?? "unknown error";

/**
 * The push log's state for an apply's end: its outcome, or what its error means; undefined when the push stays
 * `reloading` (its reload did not end in time: nobody can tell yet whether HAProxy runs its files).
 * @param {unknown} error
 * @returns {"refused" | "stale" | "abandoned" | undefined}
 */
export const endState = (error) => {
  if (!(error instanceof ApplyError)) return "refused";
  if (error.extra.reloadTimedOut === true) return undefined;
  return error.status === 409 ? "stale" : error.status === 410 ? "abandoned" : "refused";
};

/**
 * A reload command that did not end within --timeout (killed, with its process group) gave no verdict: what it
 * started may go on (`systemctl reload` leaves its job to systemd), so HAProxy may be reading the new files. They stay
 * in place, nothing is put back under it; the push stays `reloading` until a later reload or the agent's start settles
 * it, and the answer is 504 `reloadTimedOut`, which the control plane reads as unknown, not as a refusal.
 * @param {number} version @param {number} timeoutMs
 */
export const reloadTimedOut = (version, timeoutMs) =>
  new ApplyError(
    504,
    `the reload of version ${version} did not finish within ${timeoutMs} ms and was killed: its files are in place, ` +
      "and whether HAProxy runs them is unknown until a later reload",
    { reloadTimedOut: true },
  );

/**
 * A check the agent killed as it stops (SIGTERM): no verdict, and no agent to ask again, as when it is down; 503
 * `agentStopping`, which the control plane reads as unreachable.
 */
export const agentStopping = () =>
  new ApplyError(503, "the check was stopped: the agent is stopping", { agentStopping: true });

/**
 * Staged files the disk would not flush: the push ends before its swap, nothing live touched.
 * @param {number} version @param {unknown} error
 */
export const stagedUnflushed = (version, error) =>
  new ApplyError(
    500,
    `version ${version} was not applied: its files could not be flushed to disk (${errorCode(error)}); ` +
      "the previous configuration is still in force; haproxy was not reloaded",
  );

/**
 * A swap that failed (a rename, or the flush after it), its previous files put back or named.
 * @param {number} version @param {unknown} error
 */
export function swapFailed(version, error) {
  const unrestored = error instanceof SwapError ? error.unrestored : [];
  const cause = error instanceof Error ? error.message : String(error);
  const what =
    error instanceof SwapError && error.flushing
      ? `the configuration directory could not be flushed to disk after the swap (${errorCode(error)})`
      : `its files could not be swapped in (${cause})`;
  return new ApplyError(
    500,
    `version ${version} was not applied: ${what}; ${restored(unrestored)}; haproxy was not reloaded`,
  );
}
