// The xDS client of the rate limit service (CONFIG_TYPE=GRPC_XDS_SOTW): one state-of-the-world ADS stream to the
// management server, subscribed to every RateLimitConfig; each snapshot is stored in the Worker, then ACKed, or
// NACKed with the reason while the previous config stays. A broken stream is reopened after an exponential backoff.
import grpc from "@grpc/grpc-js";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { loadProto, loadProtoType, structToJson } from "./proto.mjs";

/** @typedef {(level: string, message: string, fields?: object) => void} Log */
/** @typedef {{ ok: true } | { ok: false, error: string } | { ok: false, aborted: true }} ApplyResult */
/** @typedef {{ versionInfo: string, resources: { type_url?: string, value: Buffer }[], typeUrl: string, nonce: string }} Response */

export const RATE_LIMIT_CONFIG_TYPE_URL = "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig";
const INVALID_ARGUMENT = 3;

/** The resources' message type (rls_conf.proto imports our algorithm extension). */
export const rateLimitConfigType = loadProtoType(
  "ratelimit/config/ratelimit/v3/rls_conf.proto",
  "ratelimit.config.ratelimit.v3.RateLimitConfig",
);

/**
 * Gives every descriptor's metadata its proto3 JSON form, down the tree.
 * @param {any[] | undefined} descriptors
 */
function metadataToJson(descriptors) {
  for (const descriptor of descriptors ?? []) {
    if (descriptor.metadata !== undefined) descriptor.metadata = structToJson(descriptor.metadata);
    metadataToJson(descriptor.descriptors);
  }
}

/**
 * The wait before reopening the stream after `failures` breaks in a row (0 for the first): the initial interval
 * doubled per failure up to the maximum, then, with jitter, spread uniformly by plus or minus `randomFactor` of itself.
 * @param {number} failures
 * @param {{ initialMs: number, maxMs: number, randomFactor: number, jitter: boolean }} backoff
 * @param {() => number} [random] uniform in [0, 1)
 */
export function backoffDelayMs(failures, backoff, random = Math.random) {
  const base = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(failures, 30));
  if (!backoff.jitter || backoff.randomFactor === 0) return base;
  return Math.round(base * (1 - backoff.randomFactor + 2 * backoff.randomFactor * random()));
}

/**
 * Decodes the resources of a response into RateLimitConfig objects in proto3 JSON form (camelCase, enums as names).
 * @param {{ type_url?: string, value: Buffer }[]} resources google.protobuf.Any as @grpc/proto-loader gives it
 *   (protobufjs keeps the original name of Any's field)
 * @returns {{ ok: true, configs: object[] } | { ok: false, error: string }}
 */
export function decodeRateLimitConfigs(resources) {
  const configs = [];
  for (const [index, resource] of resources.entries()) {
    if (resource.type_url !== RATE_LIMIT_CONFIG_TYPE_URL) {
      return {
        ok: false,
        error: `resource ${index} has type ${resource.type_url || "(none)"}, expected ${RATE_LIMIT_CONFIG_TYPE_URL}`,
      };
    }
    try {
      const message = rateLimitConfigType.decode(resource.value);
      const config = rateLimitConfigType.toObject(message, { enums: String, longs: Number, defaults: false });
      metadataToJson(config.descriptors);
      configs.push(config);
    } catch (error) {
      return {
        ok: false,
        error: `resource ${index} cannot be decoded: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }
  return { ok: true, configs };
}

/**
 * What tells a snapshot sent again from another: its type, version and every resource's bytes.
 * @param {Response} response
 */
function snapshotKey(response) {
  const hash = createHash("sha256").update(`${response.typeUrl}\n${response.versionInfo ?? ""}\n`);
  for (const resource of response.resources ?? []) {
    hash.update(`${resource.type_url ?? ""}\n${resource.value.length}\n`).update(resource.value);
  }
  return hash.digest("hex");
}

/** @param {number} ms @param {AbortSignal} signal resolves early once `signal` aborts */
function pause(ms, signal) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve(undefined);
    };
    const timer = setTimeout(done, ms);
    if (signal.aborted) done();
    else signal.addEventListener("abort", done);
  });
}

/**
 * One PUT of the snapshot: the Worker's verdict, or the problem that left the snapshot undecided.
 * @param {string} url @param {string} token @param {object[]} configs @param {AbortSignal} signal
 * @returns {Promise<{ ok: true } | { ok: false, error: string } | { problem: string, status?: number }>}
 */
async function putSnapshot(url, token, configs, signal) {
  try {
    const response = await fetch(`${url}/rlconfig/files`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ configs }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]),
    });
    const text = await response.text();
    if (response.status === 200) return { ok: true };
    if (response.status !== 400 && response.status !== 413) {
      return { problem: `the rate limit service answered ${response.status}`, status: response.status };
    }
    let error = text;
    try {
      error = JSON.parse(text).error ?? text;
    } catch {}
    return { ok: false, error };
  } catch (error) {
    return {
      problem: `the rate limit service cannot be reached: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/**
 * Stores a snapshot in the Worker through PUT /rlconfig/files (JSON form). Only the Worker's verdict on the snapshot
 * is final: 200, or a refusal (400, or 413 for a snapshot over its RATELIMIT_CONFIG_MAX_BODY_BYTES). An unreachable,
 * failing or slow Worker, or one refusing the token (401, 404 without one), says nothing of the snapshot, so it is
 * asked again after each delay of `retryDelaysMs` (the last repeating) until it decides or `signal` aborts: a NACK
 * then would make a server that holds a NACKed version until it changes never send it again.
 * @param {{ url: string, token: string, log: Log, retryDelaysMs?: number[] }} options
 * @returns {(configs: object[], version: string, signal: AbortSignal) => Promise<ApplyResult>}
 */
export function workerApplier({ url, token, log, retryDelaysMs = [250, 1000, 3000, 10_000, 30_000] }) {
  return async (configs, version, signal) => {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) await pause(retryDelaysMs[Math.min(attempt, retryDelaysMs.length) - 1], signal);
      if (signal.aborted) return { ok: false, aborted: true };
      const result = await putSnapshot(url, token, configs, signal);
      if (!("problem" in result)) return result;
      if (signal.aborted) return { ok: false, aborted: true };
      const { problem, status } = result;
      if (status === 401 || status === 404) {
        log("error", "xds: the rate limit service refuses the admin token; trying again", { version, status });
      } else log("warn", "xds: storing the snapshot failed; trying again", { version, attempt: attempt + 1, problem });
    }
  };
}

/** @param {import("./settings.mjs").GatewaySettings} settings */
function channelCredentials(settings) {
  if (!settings.CONFIG_GRPC_XDS_SERVER_USE_TLS) return grpc.credentials.createInsecure();
  const read = (/** @type {string | undefined} */ file) => (file ? readFileSync(file) : null);
  return grpc.credentials.createSsl(
    read(settings.CONFIG_GRPC_XDS_SERVER_TLS_CACERT),
    read(settings.CONFIG_GRPC_XDS_CLIENT_TLS_KEY),
    read(settings.CONFIG_GRPC_XDS_CLIENT_TLS_CERT),
  );
}

/** @param {import("./settings.mjs").GatewaySettings} settings */
function channelOptions(settings) {
  const retry = settings.CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL;
  /** @type {Record<string, string | number>} */
  const options = {
    "grpc.enable_channelz": 0,
    // While the server is down, connections are tried every CONNECT_RETRY_INTERVAL (not grpc-js's growing backoff).
    "grpc.initial_reconnect_backoff_ms": retry,
    "grpc.max_reconnect_backoff_ms": retry,
  };
  if (settings.XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES > 0) {
    options["grpc.max_receive_message_length"] = settings.XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES;
  }
  if (settings.CONFIG_GRPC_XDS_SERVER_USE_TLS && settings.CONFIG_GRPC_XDS_SERVER_TLS_SAN) {
    options["grpc.ssl_target_name_override"] = settings.CONFIG_GRPC_XDS_SERVER_TLS_SAN;
    options["grpc.default_authority"] = settings.CONFIG_GRPC_XDS_SERVER_TLS_SAN;
  }
  return options;
}

export class XdsConfigClient {
  /**
   * @param {import("./settings.mjs").GatewaySettings} settings
   * @param {{ apply: (configs: object[], version: string, signal: AbortSignal) => Promise<ApplyResult>, log: Log }} options
   */
  constructor(settings, { apply, log }) {
    this.settings = settings;
    this.apply = apply;
    this.log = log;
    const { AggregatedDiscoveryService } = loadProto("envoy/service/discovery/v3/ads.proto").envoy.service.discovery.v3;
    this.client = new AggregatedDiscoveryService(
      settings.CONFIG_GRPC_XDS_SERVER_URL,
      channelCredentials(settings),
      channelOptions(settings),
    );
    this.node = {
      id: settings.CONFIG_GRPC_XDS_NODE_ID,
      userAgentName: "edge-control-plane-ratelimit",
      metadata: {
        fields: Object.fromEntries(
          settings.CONFIG_GRPC_XDS_NODE_METADATA.map(([key, value]) => [key, { stringValue: value }]),
        ),
      },
    };
    // waitForReady (a metadata option in grpc-js): while the server cannot be reached, a new stream waits for the
    // channel's connection attempts (every CONNECT_RETRY_INTERVAL) instead of failing at once.
    this.metadata = new grpc.Metadata({ waitForReady: true });
    for (const [name, value] of settings.CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS)
      this.metadata.add(name.toLowerCase(), value);
    /** The version of the last snapshot accepted ("" before any): sent when subscribing again and with a NACK. */
    this.acceptedVersion = "";
    /**
     * The last snapshot refused on this stream, until one is accepted: sent again, it is refused again without asking
     * the Worker.
     * @type {{ key: string, error: string, repeats: number } | undefined}
     */
    this.refused = undefined;
    this.failures = 0;
    this.stopped = false;
    /** @type {grpc.ClientDuplexStream<any, any> | undefined} */
    this.call = undefined;
    /** @type {() => void} */
    let accepted = () => {};
    /** Resolves once the first snapshot is stored. @type {Promise<void>} */
    this.firstAccepted = new Promise((resolve) => (accepted = () => resolve()));
    this.markAccepted = accepted;
    /** Aborted by stop(), which ends the backoff between streams at once. */
    this.stopping = new AbortController();
  }

  /** Runs until stop(): a stream at a time, with the backoff between them. */
  start() {
    this.watchConnection();
    this.running = this.loop();
    return this;
  }

  /**
   * A stream waiting for its connection says nothing, so each failed connection attempt is logged here: a wrong
   * address, a refused connection or a TLS handshake that fails shows up while the client keeps trying.
   */
  watchConnection() {
    const channel = this.client.getChannel();
    const watch = (/** @type {grpc.connectivityState} */ state) =>
      channel.watchConnectivityState(state, Infinity, () => {
        if (this.stopped) return;
        const next = channel.getConnectivityState(false);
        if (next === grpc.connectivityState.TRANSIENT_FAILURE) {
          this.log("warn", "xds: cannot reach the management server; trying again", {
            server: this.settings.CONFIG_GRPC_XDS_SERVER_URL,
          });
        }
        if (next !== grpc.connectivityState.SHUTDOWN) watch(next);
      });
    watch(channel.getConnectivityState(false));
  }

  async loop() {
    while (!this.stopped) {
      const delivered = await this.streamOnce();
      if (this.stopped) break;
      // A stream that delivered a snapshot was healthy: the next break starts the backoff again.
      this.failures = delivered ? 0 : this.failures + 1;
      const delay = backoffDelayMs(Math.max(0, this.failures - 1), this.backoff());
      this.log("info", "xds: stream closed; opening a new one after the backoff", {
        delayMs: delay,
        failures: this.failures,
      });
      await pause(delay, this.stopping.signal);
    }
  }

  /** The backoff of the settings: between streams, and before refusing a refused snapshot sent again. */
  backoff() {
    return {
      initialMs: this.settings.XDS_CLIENT_BACKOFF_INITIAL_INTERVAL,
      maxMs: this.settings.XDS_CLIENT_BACKOFF_MAX_INTERVAL,
      randomFactor: this.settings.XDS_CLIENT_BACKOFF_RANDOM_FACTOR,
      jitter: this.settings.XDS_CLIENT_BACKOFF_JITTER,
    };
  }

  /** @param {{ responseNonce?: string, errorDetail?: { code: number, message: string } }} [extra] */
  request(extra = {}) {
    return {
      versionInfo: this.acceptedVersion,
      node: this.node,
      resourceNames: [],
      typeUrl: RATE_LIMIT_CONFIG_TYPE_URL,
      ...extra,
    };
  }

  /**
   * One stream: subscribes (with the version already held, so an unchanged server need not resend), handles the
   * responses in order, and resolves when the stream ends, with whether it delivered any response.
   * @returns {Promise<boolean>}
   */
  streamOnce() {
    // A new stream asks the Worker once more about a snapshot it refused: it may have been mended meanwhile (a larger
    // RATELIMIT_CONFIG_MAX_BODY_BYTES), and only a resend within one stream is the loop the cache is there to stop.
    this.refused = undefined;
    return new Promise((resolve) => {
      let delivered = false;
      let queue = Promise.resolve();
      const call = this.client.StreamAggregatedResources(this.metadata);
      this.call = call;
      // Ends a snapshot's storing still retrying a Worker that is away: the next stream gets the snapshot again.
      const streamGone = new AbortController();
      // Ends the work on a response once a newer one is queued behind it: its retries, or the wait before a refusal.
      let superseded = new AbortController();
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        this.call = undefined;
        streamGone.abort();
        queue.finally(() => resolve(delivered));
      };
      call.on("data", (/** @type {any} */ response) => {
        delivered = true;
        superseded.abort();
        superseded = new AbortController();
        const signals = { hurry: AbortSignal.any([streamGone.signal, superseded.signal]) };
        queue = queue.then(() => this.handle(call, response, signals));
      });
      call.on("error", (/** @type {grpc.ServiceError} */ error) => {
        if (!this.stopped)
          this.log("warn", "xds: stream failed", {
            code: grpc.status[error.code] ?? error.code,
            details: error.details,
          });
        end();
      });
      call.on("end", end);
      call.on("status", end);
      this.log("info", "xds: subscribing", {
        server: this.settings.CONFIG_GRPC_XDS_SERVER_URL,
        node: this.node.id,
        version: this.acceptedVersion,
      });
      call.write(this.request());
    });
  }

  /**
   * The verdict on a response: the Worker's, or for the snapshot last refused sent again, the same refusal without
   * asking the Worker, after a backoff (go-control-plane's snapshot cache resends a NACKed snapshot at once, forever).
   * @param {Response} response
   * @param {{ hurry: AbortSignal }} signals `hurry` ends that backoff or the Worker's retries, without an answer (the
   *   stream is gone, or a newer response is queued)
   * @returns {Promise<ApplyResult & { repeats?: number }>}
   */
  async verdict(response, { hurry }) {
    if (response.typeUrl !== RATE_LIMIT_CONFIG_TYPE_URL) {
      return {
        ok: false,
        error: `unexpected type ${response.typeUrl}, subscribed to ${RATE_LIMIT_CONFIG_TYPE_URL} only`,
      };
    }
    const key = snapshotKey(response);
    if (this.refused?.key === key) {
      const { error, repeats } = this.refused;
      this.refused.repeats++;
      await pause(backoffDelayMs(repeats, this.backoff()), hurry);
      // A newer response replaces this one, whose answer would be stale.
      return hurry.aborted ? { ok: false, aborted: true } : { ok: false, error, repeats: repeats + 1 };
    }
    const decoded = decodeRateLimitConfigs(response.resources ?? []);
    // `hurry`: a newer response queued behind this one ends its retries too, so an outage stores only the newest.
    const result = decoded.ok ? await this.apply(decoded.configs, response.versionInfo ?? "", hurry) : decoded;
    if (!("aborted" in result)) this.refused = result.ok ? undefined : { key, error: result.error, repeats: 0 };
    return result;
  }

  /**
   * Applies one response and answers it: ACK with its version, or NACK with the previous version and the reason; a
   * stream that ended before the Worker decided, or a resend superseded while it waited, gets no answer.
   * @param {grpc.ClientDuplexStream<any, any>} call
   * @param {Response} response
   * @param {{ hurry: AbortSignal }} signals
   */
  async handle(call, response, signals) {
    // A newer response is queued behind this one: state of the world, so only the newest is stored and answered.
    if (signals.hurry.aborted) return;
    const version = response.versionInfo ?? "";
    const nonce = response.nonce ?? "";
    const result = await this.verdict(response, signals);
    if ("aborted" in result) return;
    if (result.ok) {
      this.acceptedVersion = version;
      this.log("info", "xds: snapshot applied", { version, resources: (response.resources ?? []).length });
      this.markAccepted();
      this.send(call, this.request({ responseNonce: nonce }));
    } else {
      const again = result.repeats ? { sentAgain: result.repeats } : {};
      this.log("error", "xds: snapshot refused; the previous config stays", { version, error: result.error, ...again });
      this.send(
        call,
        this.request({ responseNonce: nonce, errorDetail: { code: INVALID_ARGUMENT, message: result.error } }),
      );
    }
  }

  /** @param {grpc.ClientDuplexStream<any, any>} call @param {object} message */
  send(call, message) {
    // A stream that broke while the snapshot was being stored is gone; the next one subscribes afresh.
    if (this.call !== call || call.destroyed) return;
    call.write(message);
  }

  async stop() {
    this.stopped = true;
    this.call?.cancel();
    this.stopping.abort();
    await this.running;
    this.client.close();
  }
}
