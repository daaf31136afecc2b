/** The layering of the Worker's code (docs/architecture.md): what may import what. `npm run lint` checks it. */
const SERVICE = "(proxy|news|ratelimit)";
module.exports = {
  forbidden: [
    { name: "no-circular", severity: "error", from: {}, to: { circular: true } },
    {
      name: "jobs-platform-knows-no-service",
      comment: "src/jobs runs detached work for every service; src/job-registry.ts wires the services' jobs into it.",
      severity: "error",
      from: { path: "^src/jobs/" },
      to: { path: `^src/${SERVICE}/` },
    },
    {
      name: "services-stay-apart",
      severity: "error",
      from: { path: `^src/${SERVICE}/` },
      to: { path: `^src/${SERVICE}/`, pathNot: "^src/$1/" },
    },
    {
      name: "shared-is-a-leaf",
      severity: "error",
      from: { path: "^src/shared/" },
      to: { path: "^(src/(?!shared/)|durable-objects/)" },
    },
    {
      name: "roots-see-only-service-faces",
      comment: "The Worker's entry, router and job registry reach a service through its index.ts only.",
      severity: "error",
      from: { path: "^src/(app|index|job-registry)\\.ts$" },
      to: { path: `^src/${SERVICE}/`, pathNot: `^src/${SERVICE}/index\\.ts$` },
    },
    {
      name: "zod-through-shared-zod",
      comment:
        "The Worker's z is src/shared/zod.ts, the members it uses (wrangler.toml [alias] gives libraries the same), so that zod's unused parts stay out of the bundle and a member missing from it fails typecheck.",
      severity: "error",
      from: { path: "^(src|durable-objects)/", pathNot: "^src/shared/zod-members\\.ts$" },
      to: { path: "node_modules/zod/" },
    },
    {
      name: "settings-meanings-stay-out-of-the-worker",
      comment:
        "The settings' meanings (*-meanings.ts beside each settings schema) are for docs/settings.md alone: only test/ and scripts/ import them, so that their texts (some 29 KB) stay out of the Worker bundle.",
      severity: "error",
      from: { path: "^(src|durable-objects)/" },
      to: { path: "-meanings\\.ts$" },
    },
    {
      name: "src-sees-durable-objects-as-types-only",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/index\\.ts$" },
      to: { path: "^durable-objects/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "pure-generators-take-data",
      comment: "The HAProxy and SSH proxy generators and certificate selection take rows, never a database handle.",
      severity: "error",
      from: { path: "^src/proxy/(haproxy/config|sshproxy/config|pki/(der|x509|selection|renewal))\\.ts$" },
      to: { path: "(drizzle-orm|^src/shared/db\\.ts$|/tables\\.ts$|^src/jobs/)", reachable: true },
    },
    {
      name: "proxy-installation-is-the-floor",
      severity: "error",
      from: { path: "^src/proxy/installation/" },
      to: { path: "^src/proxy/(routes|haproxy|sshproxy|pki)/|^src/proxy/jobs(\\.ts$|/)|^src/jobs/" },
    },
    {
      name: "proxy-haproxy-params-is-pure",
      comment:
        "The params vetting reads HAProxy's grammar only: no table, repository, route, engine or job, no Workers module, no other part of the Worker but the pure shared Result.",
      severity: "error",
      from: { path: "^src/proxy/haproxy-params/" },
      to: { path: "^src/(?!proxy/haproxy-params/|shared/result\\.ts$)|^durable-objects/|^cloudflare:|drizzle-orm" },
    },
    {
      name: "proxy-haproxy-params-through-its-index",
      comment: "The rest of the Worker vets params through haproxy-params/index.ts, which lists what it offers.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/proxy/haproxy-params/" },
      to: { path: "^src/proxy/haproxy-params/(?!index\\.ts$)" },
    },
    {
      name: "proxy-audit-is-a-leaf",
      comment: "The audit log's repository needs nothing of the proxy but its own table: the writes hand it entries.",
      severity: "error",
      from: { path: "^src/proxy/audit/" },
      to: { path: "^src/proxy/(?!audit/)" },
    },
    {
      name: "proxy-engines-below-routes-and-jobs",
      severity: "error",
      from: { path: "^src/proxy/(haproxy|sshproxy|pki|monitoring)/" },
      to: { path: "^src/proxy/routes/|^src/proxy/jobs(\\.ts$|/)" },
    },
    {
      name: "proxy-pki-below-haproxy",
      severity: "error",
      from: { path: "^src/proxy/pki/" },
      to: { path: "^src/proxy/(haproxy|sshproxy)/" },
    },
    {
      name: "ratelimit-core-is-pure",
      comment:
        "The decision core runs in plain Node: no Workers module, no other part of the Worker but the pure shared Result.",
      severity: "error",
      from: { path: "^src/ratelimit/core/" },
      to: {
        path: "^src/(?!ratelimit/core/|shared/result\\.ts$)|^durable-objects/|^cloudflare:",
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "ratelimit-settings-below-stats",
      severity: "error",
      from: { path: "^src/ratelimit/[a-z-]*settings\\.ts$" },
      to: { path: "^src/ratelimit/stats/" },
    },
    {
      name: "memcache-not-through-redis",
      severity: "error",
      from: { path: "^src/ratelimit/stores/memcache/" },
      to: { path: "^src/ratelimit/stores/redis/" },
    },
    {
      name: "news-store-is-the-floor",
      severity: "error",
      from: { path: "^src/news/store/" },
      to: { path: "^src/news/(routes|ingest)/|^src/news/(app|index)\\.ts$" },
    },
    {
      name: "ratelimit-parts-below-runtime-and-routes",
      severity: "error",
      from: { path: "^src/ratelimit/(core|config|stores|stats)/" },
      to: { path: "^src/ratelimit/routes/|^src/ratelimit/(runtime|app|index)\\.ts$" },
    },
    {
      name: "console-talks-only-http",
      comment:
        "The web console (console/, built into the static assets) reaches the services through their HTTP APIs only, " +
        "so every rule the API enforces holds in it; the Worker's code never imports browser code either.",
      severity: "error",
      from: { path: "^console/" },
      to: { path: "^(src|durable-objects)/" },
    },
    {
      name: "worker-does-not-import-the-console",
      severity: "error",
      from: { path: "^(src|durable-objects)/" },
      to: { path: "^console/" },
    },
    {
      name: "console-pages-apart",
      comment: "Each page of the console stands alone: shared pieces live in console/*.ts, not in another page.",
      severity: "error",
      from: { path: "^console/pages/([^/]+)\\.ts$" },
      to: {
        path: "^console/pages/",
        pathNot: "^console/pages/($1|sign-in|project|project-forms|ratelimit-charts)\\.ts$",
      },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^src/ratelimit/gen/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".mjs", ".js", ".json"] },
  },
};
