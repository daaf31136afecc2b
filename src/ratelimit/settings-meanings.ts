// The meanings of the rate limit service's settings and limits (src/ratelimit/settings.ts), for docs/settings.md only:
// the Worker never imports this module (.dependency-cruiser.cjs), so the texts stay out of its bundle. The statistics'
// settings have theirs in observability-settings-meanings.ts.
import { type SettingMeanings, oneLine } from "../shared/settings";
import type { observabilityFields } from "./observability-settings";
import type { RateLimitSettings } from "./settings";

export const rateLimitSettingMeanings: SettingMeanings<
  Exclude<keyof typeof RateLimitSettings.shape, keyof typeof observabilityFields>,
  "LOCAL_CACHE_SIZE_IN_BYTES"
> = {
  RATELIMIT_MAX_REQUEST_BYTES: oneLine`
    Largest body, in bytes, of POST /json and of ShouldRateLimit over Connect, gRPC-Web and the reverse bridge; a
    larger one is refused before it is read whole (413 on /json, RESOURCE_EXHAUSTED on the gRPC routes, as grpc-go
    answers an oversized message). A request is a few hundred bytes. Give the gRPC gateway the same value.`,
  RATELIMIT_MAX_DESCRIPTORS: oneLine`
    Most descriptors (the lists of key/value entries Envoy sends, one per rate limit action set of a route) in one
    ShouldRateLimit request, checked before any counter is touched (/json: 400; gRPC: INVALID_ARGUMENT). Each costs a
    counter increment; Envoy rarely sends more than a handful.`,
  RATELIMIT_MAX_DESCRIPTOR_ENTRIES: oneLine`
    Most entries in one descriptor, refused like too many descriptors. An entry matches one nested level of the
    configuration and adds to the cache key.`,
  RATELIMIT_MAX_VALUE_BYTES: oneLine`
      Largest domain, and largest key or value of a descriptor entry, in UTF-8 bytes, refused like too many
      descriptors before any counter is touched. The values become counter keys (Durable Object names and rows, Redis
      keys). The default is above Envoy's default limit on all request headers (max_request_headers_kb, 60 KiB), so no
      value a default Envoy takes from a request is refused: Envoy lets a request through when the rate limit call
      fails, unless its failure_mode_deny is set. Lower it only with failure_mode_deny, or for descriptors that carry
      no request data.`,
  RATELIMIT_MAX_NESTING_DEPTH: oneLine`
    Most JSON objects and arrays, or YAML maps and sequences, nested inside one another: in /json bodies, PUT
    /rlconfig/files bodies and each YAML file (aliases expanded), checked before a parser would recurse. A
    configuration as deep as RATELIMIT_MAX_DESCRIPTOR_ENTRIES needs about 70.`,
  RATELIMIT_CONFIG_MAX_BODY_BYTES: oneLine`
    Largest body, in bytes, of PUT /rlconfig/files and PUT /rlconfig/files/{name}; a larger one answers 413 before
    it is read whole. The xDS client stores its snapshots through it: keep it above the JSON form of the largest
    snapshot.`,
  RATELIMIT_CONFIG_MAX_FILES: oneLine`
    Most uploaded files (or xDS resources) in the set, sent whole by PUT /rlconfig/files or one by one; each is one
    row of the set's single D1 batch.`,
  RATELIMIT_CONFIG_MAX_FILE_BYTES: oneLine`
      Largest YAML file in UTF-8 bytes (for the xDS form, the YAML a resource becomes), checked before it is parsed,
      in every set (bundled, runtime, xDS). The parser holds about 75 bytes of memory per byte of the densest input,
      so 512 KiB costs under 40 MB of a Worker's 128 MB; D1 stores a file in one row of at most 2,000,000 bytes.`,
  RATELIMIT_CONFIG_MAX_ALIAS_NODES: oneLine`
    How many YAML nodes aliases (\`*name\` references to an \`&name\` anchor) may add when expanded, across all
    files of one set. An alias bomb (aliases of aliases, each multiplying the last) is refused after this much work
    instead of expanding exponentially; 10,000 covers some 2,000 uses of a shared rate_limit block.`,
  CONFIG_TYPE: oneLine`
    Where the rate limit rules come from. \`FILE\`: the bundled YAML files, or the runtime set stored in D1 through
    PUT /rlconfig/files. \`GRPC_XDS_SOTW\`: only the snapshots the xDS client (the gRPC gateway, speaking Envoy's
    configuration-discovery protocol in its state-of-the-world form) stores; the bundled files never apply. Set the
    same value for the gateway.`,
  FORCE_START_WITHOUT_INITIAL_CONFIG: oneLine`
    Serve before the first configuration is loaded. The Worker always does (/json answers 400 \`no rate limit
    configuration loaded\` while nothing is); the gRPC gateway reads it too: with CONFIG_TYPE=GRPC_XDS_SOTW and
    \`false\` it opens its port only once the first xDS snapshot is accepted.`,
  RUNTIME_ROOT: "Not read on Workers: the project's config/ folder, bundled with the Worker, plays the watched root.",
  RUNTIME_SUBDIRECTORY: "Subdirectory of config/ holding the application directory.",
  RUNTIME_APPDIRECTORY: "Directory (under config/ and RUNTIME_SUBDIRECTORY) of the rate limit `*.yaml` files.",
  RUNTIME_IGNOREDOTFILES: "Skip files whose name starts with a dot.",
  RUNTIME_WATCH_ROOT:
    "Accepted, no effect: `wrangler dev` rebuilds on any change under config/, which covers both modes.",
  MERGE_DOMAIN_CONFIG: "Allow several files to declare the same domain; their top-level descriptors are merged.",
  SHADOW_MODE: "Global shadow mode: an OVER_LIMIT answer becomes OK overall (each descriptor's status is kept).",
  RATELIMIT_STRICT_UPSTREAM_CONFIG: oneLine`
    Load only what the current upstream release loads: this project's \`algorithm\`, \`unit_multiplier\`,
    \`burst\`, \`lease\` and \`additional_limits\` keys (and the xDS \`rateLimit.algorithm\` extension) are refused as unknown keys, with upstream's
    message.`,
  QUOTA_MODE: oneLine`
    Global quota mode: every descriptor that is not unlimited is a quota descriptor. A quota descriptor over its
    limit keeps its OVER_LIMIT status, but the request is OVER_LIMIT only when a descriptor that is not a quota is, or
    every quota descriptor is. Per rule: \`quota_mode: true\`.`,
  RESPONSE_DYNAMIC_METADATA: oneLine`
    Answer \`dynamicMetadata\`: the domain, each descriptor's entries (\`key=value\`), override and hits, the
    request's hits, and the merged \`metadata\` of the rules whose descriptors passed (the first value wins); an
    unlimited or replaced rule gives none.`,
  RESPONSE_DYNAMIC_METADATA_OVER_LIMIT: oneLine`
    With RESPONSE_DYNAMIC_METADATA: \`dynamicMetadata\` also gains \`overLimit\`, the index and entries of each
    descriptor that was OVER_LIMIT (absent when none was), so that Envoy can log which one tripped. Off by default:
    upstream's metadata stays as it is.`,
  STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT:
    "When a request would take any descriptor over its limit, the other descriptors' counters are not incremented.",
  NEAR_LIMIT_RATIO: "Fraction of the limit above which hits count in the `near_limit` statistic.",
  CACHE_KEY_PREFIX:
    "Prepended verbatim to every cache key (a counter's name), and so to every counter's Durable Object name.",
  LocalCacheSizeInBytes:
    "Bytes of in-isolate cache for keys known to be over their limit until their window ends; `0` disables it.",
  LIMIT_RESPONSE_HEADERS_ENABLED: "Add the three headers below to the response's `responseHeadersToAdd`.",
  LIMIT_RESPONSE_HEADERS_FORMAT: oneLine`
    Which headers LIMIT_RESPONSE_HEADERS_ENABLED adds: \`draft03\`, the reference's three below; or \`ietf\`,
    \`RateLimit-Policy\` and \`RateLimit\` as structured fields per draft-ietf-httpapi-ratelimit-headers-10, the
    policy named after the deciding rule (its \`name\`, else its statistics key).`,
  LIMIT_LIMIT_HEADER: "Name of the header carrying the limit.",
  LIMIT_REMAINING_HEADER: "Name of the header carrying the hits left in the window.",
  LIMIT_RESET_HEADER: "Name of the header carrying the seconds until the window ends.",
  HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED:
    "/healthcheck also requires a loaded configuration with at least one domain.",
  RATELIMIT_ADMIN_TOKEN:
    "Bearer token of the admin routes (/rlconfig, /rlconfig/files, /stats, /metrics, /debug); unset, they answer 404.",
};
