// The `z` of the Worker: only the zod members in zod-members.ts. wrangler.toml [alias] resolves every import of "zod"
// here, @hono/zod-openapi's among them: it passes its whole `z` to zod-to-openapi, which would otherwise keep all of
// zod in the bundle. Importing `z` from here (never from "zod", a lint rule) makes a member not listed a type error.
import * as z from "./zod-members";

export { z };
