// The addresses `npm start`'s servers will listen on, tried before anything starts: one that is taken is named with
// the setting that chooses another, instead of a "ready" whose links point at another server.
import { lstatSync } from "node:fs";
import { createConnection, createServer } from "node:net";

/**
 * Binds (host, port) for a moment: the error code when that fails, undefined when the address is free.
 * @param {string} host @param {number} port
 * @returns {Promise<string | undefined>}
 */
export function bindError(host, port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (/** @type {NodeJS.ErrnoException} */ error) => resolve(error.code ?? String(error)));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/**
 * Whether a server answers on a unix socket (a socket file nobody listens on is stale: the gateway replaces it).
 * @param {string} socketPath
 * @returns {Promise<boolean>}
 */
function socketAnswers(socketPath) {
  return new Promise((resolve) => {
    const socket = createConnection(socketPath);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * A port as the command line or the environment gives it: an integer from `min` to 65535, else undefined.
 * @param {string} text @param {number} [min]
 */
export function parsePort(text, min = 1) {
  const port = /^\d{1,5}$/.test(String(text)) ? Number(text) : NaN;
  return port >= min && port <= 65535 ? port : undefined;
}

/**
 * Why a server cannot listen on host:port, or undefined when it can. "localhost" is tried on both loopback addresses
 * (the links and the health check go to whichever answers); an address family this machine lacks is no obstacle.
 * @param {string} host @param {number} port
 */
async function unavailable(host, port) {
  const addresses = host === "localhost" ? ["127.0.0.1", "::1"] : [host];
  for (const [index, address] of addresses.entries()) {
    const code = await bindError(address, port);
    if (code === undefined || (index > 0 && ["EADDRNOTAVAIL", "EAFNOSUPPORT"].includes(code))) continue;
    return code === "EADDRINUSE" ? "is already in use" : `cannot be listened on (${code})`;
  }
  return undefined;
}

/** @param {string} host */
const where = (host) => (host.includes(":") ? `[${host}]` : host);

/**
 * The problems with the addresses to listen on, one line each naming the port, who needs it and the setting that
 * chooses another.
 * `portOrigin` says where wrangler dev's port came from ("set by --port", "set by PORT", "the default"); `port` is
 * undefined when that setting is malformed (named by the caller), and then not tried.
 * @param {{ host: string, port: number | undefined, portOrigin: string, inspectorPort?: number, inspectorHost: string,
 *   gateway: { GRPC_UDS?: string, GRPC_HOST?: string, GRPC_PORT?: string } }} plan
 * @returns {Promise<string[]>}
 */
export async function portProblems({ host, port, portOrigin, inspectorPort, inspectorHost, gateway }) {
  /** @type {string[]} */
  const problems = [];
  if (port !== undefined) {
    const devProblem = await unavailable(host, port);
    if (devProblem) {
      problems.push(
        `port ${port} (${where(host)}) ${devProblem}: wrangler dev listens there (${portOrigin}). ` +
          `Choose another with --port or PORT, e.g. npm start -- --port ${port === 65535 ? port - 1 : port + 1}`,
      );
    }
  }
  if (inspectorPort !== undefined) {
    const inspectorProblem = await unavailable(inspectorHost, inspectorPort);
    if (inspectorProblem) {
      problems.push(
        `port ${inspectorPort} (${where(inspectorHost)}) ${inspectorProblem}: wrangler's inspector listens there. ` +
          "Choose another with --inspector-port, or leave it out to take the first free one from 9229",
      );
    }
  }
  problems.push(...(await gatewayProblems(gateway)));
  return problems;
}

/**
 * The problem with the gateway's address (GRPC_UDS, else GRPC_HOST and GRPC_PORT), if any.
 * @param {{ GRPC_UDS?: string, GRPC_HOST?: string, GRPC_PORT?: string }} gateway
 * @returns {Promise<string[]>}
 */
async function gatewayProblems({ GRPC_UDS, GRPC_HOST, GRPC_PORT }) {
  if (GRPC_UDS) {
    let stat;
    try {
      stat = lstatSync(GRPC_UDS);
    } catch {
      return [];
    }
    if (stat.isSocket() && !(await socketAnswers(GRPC_UDS))) return [];
    const what = stat.isSocket() ? "has a server listening on it" : "is a file that is not a socket";
    return [`unix socket ${GRPC_UDS} (GRPC_UDS) ${what}: the gRPC gateway listens there. Choose another with GRPC_UDS`];
  }
  const host = GRPC_HOST || "0.0.0.0";
  const port = GRPC_PORT ? parsePort(GRPC_PORT, 0) : 8081;
  // A malformed GRPC_PORT is the settings check's to name; 0 takes whatever port is free.
  if (!port) return [];
  const problem = await unavailable(host, port);
  if (!problem) return [];
  return [
    `port ${port} (${where(host)}) ${problem}: the gRPC gateway listens there ` +
      `(${GRPC_PORT ? "set by GRPC_PORT" : "the default"}). ` +
      `Choose another with GRPC_PORT, e.g. GRPC_PORT=${port === 65535 ? port - 1 : port + 1} npm start ` +
      "(GRPC_HOST chooses the address, GRPC_UDS a unix socket instead)",
  ];
}
