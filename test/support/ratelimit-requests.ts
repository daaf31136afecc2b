// Descriptors of rate limit requests that several suites send, for configurations with the same rule keys.

const descriptor = (key: string, value: string) => ({ entries: [{ key, value }] });

/**
 * One descriptor of each kind a suite's rules give, `who` keeping the counted ones fresh: a counted limit (client),
 * a named one (user), a rule without a limit (path /free), an unlimited rule, and no rule at all (nothing).
 */
export const everyKindOfDescriptor = (who: string) => [
  descriptor("client", who),
  descriptor("user", who),
  descriptor("path", "/free"),
  descriptor("unlimited", "u"),
  descriptor("nothing", "x"),
];
