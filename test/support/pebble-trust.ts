// Imported first by proxy-certificates.test.ts: test/support/wrangler-dev.mjs hands process.env to wrangler dev, so the
// CA that signs pebble's HTTPS listener must be named in NODE_EXTRA_CA_CERTS before it starts (the file is written in
// beforeAll). miniflare hands the certificates of that file to workerd, whose outbound fetch then trusts pebble.
import { tmpdir } from "node:os";
import path from "node:path";

export const TRUST_FILE = path.join(tmpdir(), `proxy-pebble-ca-${process.pid}.pem`);
process.env.NODE_EXTRA_CA_CERTS = TRUST_FILE;
