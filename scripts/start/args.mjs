// The command line of `npm start`: its usage text, and the few `wrangler dev` options it reads itself (every argument
// still goes on to wrangler dev as given). Options are read as wrangler's yargs reads them: `--name value` or
// `--name=value`, and `--var` (an array option) takes every value up to the next option.

export const usage = `usage: npm start [-- OPTIONS]            (node scripts/start.mjs [OPTIONS])
Runs every service locally until Ctrl-C: wrangler dev (the Worker) and the rate limit gRPC gateway in front of it.
Before it starts anything it checks their ports and every setting, and stops naming each one that is taken or
invalid. Options other than -h are passed on to wrangler dev, with the others it takes (see npx wrangler dev --help).

options:
  --port PORT            port of wrangler dev (default: PORT, else 8787)
  --ip ADDRESS           address wrangler dev listens on (default localhost)
  --inspector-port PORT  port of wrangler's devtools inspector (default: the first free one from 9229)
  --persist-to DIR       the local state (D1, Durable Objects, queues) in DIR instead of .wrangler/state
  --var NAME:VALUE       a Worker variable, over wrangler.toml [vars] and .dev.vars (repeatable)
  --env-file FILE        the Worker's local variables from FILE instead of .dev.vars (wrangler's option; repeatable)
  --log-level LEVEL      wrangler's log level (default warn; log shows every request and info line)
  -h, --help             print this and exit

environment:
  PORT                   port of wrangler dev when --port is not given (default 8787)
  GRPC_PORT              port of the gRPC gateway (default 8081; 0 takes a free one)
  GRPC_HOST              address the gRPC gateway binds (default 0.0.0.0)
  GRPC_UDS               a unix socket path for the gRPC gateway instead of GRPC_HOST and GRPC_PORT
  The gateway also takes the CONFIG_*, XDS_*, GRPC_*, FORCE_START_* and RATELIMIT_ADMIN_TOKEN lines of .dev.vars;
  the environment wins (npm run grpc-gateway -- --help lists them).

.dev.vars holds the Worker's local variables and secrets; it is created from .dev.vars.example when missing. The
Worker sees wrangler.toml [vars], then .dev.vars (or the --env-file files), then --var, the later winning; npm start
checks that env against every service's settings (docs/settings.md) and requires PROXY_ADMIN_USERNAME,
PROXY_ADMIN_PASSWORD, MASTER_KEY, JWT_SECRET and RATELIMIT_ADMIN_TOKEN to be set and not empty. With no news
publisher set (GUARDIAN_API_KEY, NYT_API_KEY, NEWS_FEEDS) and no NEWS_DEMO, it passes --var NEWS_DEMO:true and runs
the news ingestion once, so that the news API has the bundled sample articles.`;

/**
 * Whether the arguments ask for the usage (anywhere, as `npm start -- --help` puts it after the separator).
 * @param {string[]} args
 */
export const wantsHelp = (args) => args.some((arg) => arg === "-h" || arg === "--help");

/**
 * The values given to an option, in order. `aliases` are its other spellings (`-c` for `--config`); an array option
 * takes every following argument up to the next one that starts with "-".
 * @param {string[]} args @param {string} name @param {{ aliases?: string[], array?: boolean }} [how]
 * @returns {string[]}
 */
export function optionValues(args, name, { aliases = [], array = false } = {}) {
  const names = [name, ...aliases];
  /** @type {string[]} */
  const values = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === "--") break;
    const inline = names.find((spelling) => arg.startsWith(`${spelling}=`));
    if (inline) {
      values.push(arg.slice(inline.length + 1));
      continue;
    }
    if (!names.includes(arg)) continue;
    while (index + 1 < args.length && !args[index + 1].startsWith("-")) {
      values.push(args[++index]);
      if (!array) break;
    }
  }
  return values;
}

/**
 * The last value of an option (yargs keeps the last of a repeated single-value option).
 * @param {string[]} args @param {string} name @param {{ aliases?: string[], array?: boolean }} [how]
 */
export const optionValue = (args, name, how) => optionValues(args, name, how).at(-1);

/** @param {string[]} args @param {string} name */
export const hasOption = (args, name) => args.some((arg) => arg === name || arg.startsWith(`${name}=`));

/**
 * What `--var NAME:VALUE` sets, as wrangler splits it: the name up to the first colon, the value after it (colons
 * kept); later ones win.
 * @param {string[]} args
 * @returns {Record<string, string>}
 */
export function cliVars(args) {
  /** @type {Record<string, string>} */
  const vars = {};
  for (const pair of optionValues(args, "--var", { array: true })) {
    const [name, ...value] = pair.split(":");
    vars[name] = value.join(":");
  }
  return vars;
}
