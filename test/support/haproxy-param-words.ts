// Params of an exact number of words, every option allowed and given once: the boundaries of HAProxy's 64 words per
// line, for the vetter's unit tests and the checks against a real haproxy.

/** Server options that go together, each one or two words, to fill a container link's params to a word count. */
const SERVER_FLAGS = [
  "check",
  "backup",
  "send-proxy-v2",
  "check-send-proxy",
  "agent-check",
  "ssl",
  "check-ssl",
  "enabled",
];
const SERVER_PAIRS = [
  "verify none",
  "agent-port 9999",
  "weight 10",
  "inter 2s",
  "fastinter 1s",
  "downinter 5s",
  "slowstart 30s",
  "agent-inter 5s",
  "pool-purge-delay 5s",
  "rise 2",
  "fall 3",
  "maxconn 100",
  "maxqueue 10",
  "minconn 2",
  "error-limit 5",
  "pool-max-conn 10",
  "pool-low-conn 2",
  "max-reuse 10",
  "port 9000",
  "on-error mark-down",
  "on-marked-down shutdown-sessions",
  "on-marked-up shutdown-backup-sessions",
  "observe layer7",
  "resolve-prefer ipv6",
  "proto h2",
  "ssl-min-ver TLSv1.2",
  "ssl-max-ver TLSv1.3",
  "cookie s1",
  "agent-send ready",
  "check-sni api.example.org",
  "sni req.hdr(host)",
  "alpn h2",
  "check-alpn h2",
];

/** Server params of exactly `count` words (55 to 74), every option allowed and given once. */
export function serverParamsOfWords(count: number): string {
  const pairs = Math.floor((count - 7) / 2);
  const flags = count - 2 * pairs;
  if (pairs > SERVER_PAIRS.length || flags > SERVER_FLAGS.length || pairs < 2) throw new Error(`cannot make ${count}`);
  return [...SERVER_FLAGS.slice(0, flags), ...SERVER_PAIRS.slice(0, pairs)].join(" ");
}

/** An acl line of exactly `count` words (at least 4). */
export const aclLineOfWords = (count: number) =>
  `acl a path_beg ${Array.from({ length: count - 3 }, (_, i) => `/p${i}`).join(" ")}`;
