// A state-of-the-world ADS management server for the xDS tests, written with @grpc/grpc-js over proto/'s ADS and
// RateLimitConfig protos: it records every DiscoveryRequest (with the stream's metadata), sends the current
// snapshot to a subscriber whose version differs, and pushes each new snapshot to every open stream (and, if asked,
// sends the snapshot again on every NACK).
import grpc from "@grpc/grpc-js";
import { readFileSync } from "node:fs";
import { loadProto } from "../../grpc-gateway/proto.mjs";
import { RATE_LIMIT_CONFIG_TYPE_URL, rateLimitConfigType } from "../../grpc-gateway/xds-client.mjs";

const ads = loadProto("envoy/service/discovery/v3/ads.proto").envoy.service.discovery.v3;

/** Under the name the xDS tests use. */
export const TYPE_URL = RATE_LIMIT_CONFIG_TYPE_URL;

export interface DiscoveryRequest {
  versionInfo?: string;
  node?: { id?: string; userAgentName?: string; metadata?: { fields?: Record<string, { stringValue?: string }> } };
  resourceNames?: string[];
  typeUrl?: string;
  responseNonce?: string;
  errorDetail?: { code?: number; message?: string };
}

export interface SeenDiscoveryRequest {
  request: DiscoveryRequest;
  /** The stream's metadata (gRPC headers), each name with its first value. */
  headers: Record<string, string>;
  /** Which stream it came on, counted from 1 over the server's life (restarts included). */
  stream: number;
}

/** A resource as the server sends it: an Any holding a RateLimitConfig, or raw bytes under any type URL. */
export type Resource = Record<string, unknown> | { typeUrl: string; value: Buffer };

/** google.protobuf.Any as @grpc/proto-loader encodes it: protobufjs keeps the original name of its type field. */
interface ProtoLoaderAny {
  type_url: string;
  value: Buffer;
}

export interface ManagementServer {
  port: number;
  seen: SeenDiscoveryRequest[];
  /** Sets the snapshot and pushes it to every open stream; resolves with the nonce it was sent under. */
  push(version: string, resources: Resource[]): string;
  /** The first request seen (from index `from`) that satisfies the predicate, waiting for it. */
  waitFor(
    predicate: (seen: SeenDiscoveryRequest) => boolean,
    from?: number,
    timeoutMs?: number,
  ): Promise<SeenDiscoveryRequest>;
  /** Stops at once, breaking the open streams, as a crash would. */
  kill(): Promise<void>;
  /** Starts again on the same port, keeping what was seen and the snapshot given. */
  restart(snapshot?: { version: string; resources: Resource[] }): Promise<void>;
}

function toAny(resource: Resource): ProtoLoaderAny {
  if (typeof resource.typeUrl === "string" && Buffer.isBuffer(resource.value))
    return { type_url: resource.typeUrl, value: resource.value };
  const value = Buffer.from(rateLimitConfigType.encode(rateLimitConfigType.fromObject(resource)).finish());
  return { type_url: TYPE_URL, value };
}

export interface ServerTls {
  ca: string;
  cert: string;
  key: string;
  /** Require a client certificate signed by `ca`. */
  requireClientCertificate: boolean;
}

export async function startManagementServer(
  options: {
    tls?: ServerTls;
    port?: number;
    /** Answer a NACK by sending the current snapshot again at once, as go-control-plane's snapshot cache does. */
    resendOnNack?: boolean;
  } = {},
): Promise<ManagementServer> {
  const seen: SeenDiscoveryRequest[] = [];
  let snapshot: { version: string; resources: Resource[] } | undefined;
  let nonce = 0;
  let streams = 0;
  const open = new Set<grpc.ServerDuplexStream<DiscoveryRequest, unknown>>();
  let server: grpc.Server;
  let port = options.port ?? 0;

  const send = (call: grpc.ServerDuplexStream<DiscoveryRequest, unknown>): string => {
    const sentNonce = String(++nonce);
    call.write({
      versionInfo: snapshot!.version,
      resources: snapshot!.resources.map(toAny),
      typeUrl: TYPE_URL,
      nonce: sentNonce,
    });
    return sentNonce;
  };

  const listen = async () => {
    server = new grpc.Server();
    server.addService(ads.AggregatedDiscoveryService.service, {
      StreamAggregatedResources(call: grpc.ServerDuplexStream<DiscoveryRequest, unknown>) {
        const stream = ++streams;
        const headers = Object.fromEntries(
          Object.entries(call.metadata.getMap()).map(([name, value]) => [name, String(value)]),
        );
        open.add(call);
        let subscribed = false;
        call.on("data", (request: DiscoveryRequest) => {
          seen.push({ request, headers, stream });
          // The first request subscribes: answer it when it does not hold the current version already.
          if (!subscribed) {
            subscribed = true;
            if (snapshot && snapshot.version !== (request.versionInfo ?? "")) send(call);
          } else if (options.resendOnNack && request.errorDetail && snapshot) send(call);
        });
        const close = () => open.delete(call);
        call.on("end", () => {
          close();
          call.end();
        });
        call.on("error", close);
        call.on("cancelled", close);
      },
    });
    const credentials = options.tls
      ? grpc.ServerCredentials.createSsl(
          readFileSync(options.tls.ca),
          [{ private_key: readFileSync(options.tls.key), cert_chain: readFileSync(options.tls.cert) }],
          options.tls.requireClientCertificate,
        )
      : grpc.ServerCredentials.createInsecure();
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, credentials, (error, bound) => (error ? reject(error) : resolve(bound))),
    );
  };
  await listen();

  return {
    get port() {
      return port;
    },
    seen,
    push(version, resources) {
      snapshot = { version, resources };
      let last = "";
      for (const call of open) last = send(call);
      return last;
    },
    async waitFor(predicate, from = 0, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = seen.slice(from).find(predicate);
        if (found) return found;
        if (Date.now() > deadline) {
          throw new Error(
            `no matching DiscoveryRequest within ${timeoutMs} ms; seen:\n${JSON.stringify(seen, null, 1)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async kill() {
      server.forceShutdown();
      open.clear();
    },
    async restart(next) {
      if (next) snapshot = next;
      await listen();
    },
  };
}
