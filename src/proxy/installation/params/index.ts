// Vets the HAProxy `params` of backends and of container links before they reach haproxy.cfg: each line is read the
// way HAProxy 2.6's configuration parser reads it (quotes, escapes, environment expansion, comments), then held to an
// allow-list of directives whose every argument is checked, so that a tenant can neither open a section, expand the
// environment, read a file nor name a directive haproxy would refuse.
export * from "./tokenizer";
export * from "./values";
export * from "./samples";
export * from "./conditions";
export * from "./http-rules";
export * from "./server-options";
export * from "./health-checks";
export * from "./directives";
export * from "./vet";
