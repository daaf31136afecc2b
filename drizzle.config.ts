// drizzle-kit reads every service's tables and writes SQL migrations where wrangler and the tests apply them.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./src/**/tables.ts",
  out: "./migrations",
});
