// The rate limit service's face: what the Worker's router mounts (the HTTP routes and the gRPC transports) and what it
// answers unmatched requests with (the error shape, the routes at setting paths). Code outside src/ratelimit reaches
// the service through here only.
export { ratelimitApp, ratelimitSettingRoutes } from "./app";
export { ratelimitErrorResponse } from "./errors";
export { ratelimitGrpcApp } from "./routes/grpc";
