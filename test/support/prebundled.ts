// The libraries the Workers suite bundles once with Vite's dependency optimizer (test/vitest.workers.config.ts).

/**
 * The libraries (and the entry points of theirs) that src/ and the suites import, but "zod" and @hono/zod-openapi: a
 * bundle of theirs would resolve "zod" itself, past wrangler.toml's alias (workerAliases), and hold a second zod.
 * "zod/v4", the module set src/shared/zod-members.ts re-exports, imports no "zod", and neither do the two libraries
 * @hono/zod-openapi loads: bundled, they save about a fifth of each test file's load.
 */
export const PREBUNDLED = [
  "@asteasolutions/zod-to-openapi",
  "@bufbuild/protobuf",
  "@bufbuild/protobuf/codegenv2",
  "@bufbuild/protobuf/wkt",
  "@connectrpc/connect",
  "@connectrpc/connect/protocol",
  "@connectrpc/connect/protocol-connect",
  "@connectrpc/connect/protocol-grpc-web",
  "@hono/zod-validator",
  "drizzle-orm",
  "drizzle-orm/batch",
  "drizzle-orm/d1",
  "drizzle-orm/sqlite-core",
  "fast-check",
  "fast-xml-parser",
  "hono",
  "hono/cookie",
  "hono/factory",
  "hono/http-exception",
  "hono/router/trie-router",
  "hono/validator",
  "ipaddr.js",
  "jose",
  "re2js",
  "yaml",
  "zod/v4",
];
