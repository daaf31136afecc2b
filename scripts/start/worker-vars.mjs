#!/usr/bin/env node
// Prints, as the last line of its output, the JSON of the variables `wrangler dev` hands the Worker before --var:
// wrangler.toml [vars], then .dev.vars (.dev.vars.<env> with --env) or the --env-file files, read by wrangler's own
// readConfig and getVarsForDev, so that npm start checks exactly what the Worker will see. It runs as a process of
// its own because importing wrangler installs SIGINT and SIGTERM handlers that exit at once, which would cut short
// npm start's stopping of its children. Argument: JSON { config, env?, envFiles? }.
const { config, env, envFiles } = JSON.parse(process.argv[2] ?? "{}");
const { unstable_getVarsForDev, unstable_readConfig } = await import("wrangler");
const read = unstable_readConfig({ config, env });
const bindings = unstable_getVarsForDev(
  config,
  envFiles?.length ? envFiles : undefined,
  read.vars,
  env,
  true,
  read.secrets,
);
const vars = Object.fromEntries(
  Object.entries(bindings).map(([name, { type, value }]) => [name, { fromFile: type === "secret_text", value }]),
);
console.log(`\n${JSON.stringify(vars)}`);
