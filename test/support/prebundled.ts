// The libraries the Workers suite bundles once with Vite's dependency optimizer (test/vitest.workers.config.ts).

/**
 * The libraries (and the entry points of theirs) that src/ and the suites import, but zod and @hono/zod-openapi: a
 * bundle of theirs would resolve "zod" itself, past wrangler.toml's alias (workerAliases), and hold a second zod.
 */
export const PREBUNDLED = [
  "@bufbuild/protobuf",
  "@bufbuild/protobuf/codegenv2",
  "@bufbuild/protobuf/wkt",
  "@connectrpc/connect",
  "@connectrpc/connect/protocol",
  "@connectrpc/connect/protocol-connect",
  "@connectrpc/connect/protocol-grpc-web",
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
];
