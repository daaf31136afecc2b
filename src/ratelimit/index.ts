// The rate limit service's face: what the Worker's router mounts (the HTTP routes and the gRPC transports). Code
// outside src/ratelimit reaches the service through here only.
export { ratelimitApp } from "./app";
export { ratelimitGrpcApp } from "./routes/grpc";
