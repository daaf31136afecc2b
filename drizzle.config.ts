// drizzle-kit reads every service's tables and writes SQL migrations where wrangler and the tests apply them.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: ["./src/proxy/tables.ts", "./src/jobs/tables.ts", "./src/ratelimit/tables.ts", "./src/news/tables.ts"],
  out: "./migrations",
});
