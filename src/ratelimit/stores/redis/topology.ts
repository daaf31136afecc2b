// How one pooled connection reaches the data: a single server, the master a sentinel names (following a
// failover), or a cluster (each command to the node owning its key's slot, following MOVED and ASK).
import {
  type Address,
  type ConnectionOptions,
  type Credentials,
  formatAddress,
  RedisError,
  RespConnection,
} from "./connection";
import { type Command, commandKey, type Reply, ReplyError } from "./resp";
import { keySlot, SLOT_COUNT } from "./slots";

export interface Transport {
  /** Sends the commands (connecting first when needed) and resolves with their replies, in order. */
  exec(commands: readonly Command[]): Promise<Reply[]>;
  /** True while a connection is open and authenticated. */
  isActive(): boolean;
  /** Connects when no connection is open; fails as exec would. */
  ensureConnected(): Promise<void>;
  close(): void;
}

export type TopologyOptions =
  | { type: "single"; address: Address }
  | { type: "sentinel"; masterName: string; sentinels: Address[]; sentinelAuth?: Credentials }
  | { type: "cluster"; nodes: Address[] };

export function openTransport(topology: TopologyOptions, options: ConnectionOptions): Transport {
  switch (topology.type) {
    case "single":
      return new SingleTransport(() => Promise.resolve(topology.address), options);
    case "sentinel":
      return new SentinelTransport(topology.masterName, topology.sentinels, topology.sentinelAuth, options);
    case "cluster":
      return new ClusterTransport(topology.nodes, options);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One connection to one server, re-dialled on the next call after it failed. */
class SingleTransport implements Transport {
  private connection: RespConnection | undefined;
  private connecting: Promise<RespConnection> | undefined;

  constructor(
    private readonly target: () => Promise<Address>,
    private readonly options: ConnectionOptions,
    private readonly afterOpen?: (connection: RespConnection) => Promise<void>,
  ) {}

  isActive(): boolean {
    return this.connection?.usable ?? false;
  }

  async ensureConnected(): Promise<void> {
    await this.open();
  }

  open(): Promise<RespConnection> {
    if (this.connection?.usable) return Promise.resolve(this.connection);
    this.connecting ??= (async () => {
      try {
        const connection = await RespConnection.open(await this.target(), this.options);
        if (this.afterOpen) {
          try {
            await this.afterOpen(connection);
          } catch (error) {
            connection.close();
            throw error;
          }
        }
        this.connection = connection;
        return connection;
      } finally {
        this.connecting = undefined;
      }
    })();
    return this.connecting;
  }

  async exec(commands: readonly Command[]): Promise<Reply[]> {
    return (await this.open()).send(commands);
  }

  /** Drops the current connection so that the next call dials again. */
  reset(): void {
    this.connection?.close();
    this.connection = undefined;
  }

  close(): void {
    this.reset();
  }
}

/** Error replies meaning "this server is not the writable master (any more)": nothing was applied. */
const NOT_MASTER = /^(READONLY|MASTERDOWN|LOADING)\b/;

/**
 * The master named by the sentinels. Each dial asks the sentinels in turn for the master's address and checks
 * with ROLE that it is a master. When the master stops accepting writes or cannot be reached, the call asks again
 * and retries until the time-out: a failover delays calls instead of failing them, and a retried call never
 * counts twice because only calls that reached no master (dial failed, or READONLY for every write) are retried.
 */
class SentinelTransport implements Transport {
  private readonly master: SingleTransport;

  constructor(
    private readonly masterName: string,
    private readonly sentinels: Address[],
    private readonly sentinelAuth: Credentials | undefined,
    private readonly options: ConnectionOptions,
  ) {
    this.master = new SingleTransport(
      () => this.askSentinels(),
      options,
      async (connection) => {
        const [role] = await connection.send([["ROLE"]]);
        const name = Array.isArray(role) ? role[0] : undefined;
        if (name !== "master") {
          throw new RedisError(
            `kvstore: ${formatAddress(connection.address)} named by the sentinels for ${this.masterName} is not a master`,
            true,
          );
        }
      },
    );
  }

  private async askSentinels(): Promise<Address> {
    const problems: string[] = [];
    for (const sentinel of this.sentinels) {
      let connection: RespConnection | undefined;
      try {
        connection = await RespConnection.open(sentinel, {
          tls: this.options.tls,
          timeoutMs: this.options.timeoutMs,
          auth: this.sentinelAuth,
        });
        const [reply] = await connection.send([["SENTINEL", "get-master-addr-by-name", this.masterName]]);
        if (Array.isArray(reply) && reply.length === 2) return { host: String(reply[0]), port: Number(reply[1]) };
        problems.push(`${formatAddress(sentinel)}: ${reply instanceof ReplyError ? reply.message : "unknown master"}`);
      } catch (error) {
        problems.push(error instanceof Error ? error.message : String(error));
      } finally {
        connection?.close();
      }
    }
    throw new RedisError(`kvstore: no sentinel knows master ${this.masterName} (${problems.join("; ")})`, true);
  }

  isActive(): boolean {
    return this.master.isActive();
  }

  ensureConnected(): Promise<void> {
    return this.master.ensureConnected();
  }

  async exec(commands: readonly Command[]): Promise<Reply[]> {
    const deadline = Date.now() + this.options.timeoutMs;
    for (;;) {
      let retryable: RedisError;
      try {
        const replies = await this.master.exec(commands);
        const refused = replies.find(
          (reply): reply is ReplyError => reply instanceof ReplyError && NOT_MASTER.test(reply.message),
        );
        if (!refused) return replies;
        // Reads may have been answered by a demoted master, but no write was applied: ask again and redo it all.
        retryable = new RedisError(`kvstore: master ${this.masterName} refused the write: ${refused.message}`, true);
      } catch (error) {
        if (!(error instanceof RedisError) || !error.notSent) throw error;
        retryable = error;
      }
      this.master.reset();
      if (Date.now() + 100 >= deadline) throw retryable;
      await sleep(100);
    }
  }

  close(): void {
    this.master.close();
  }
}

const REDIRECT = /^(MOVED|ASK) (\d+) (\S+)$/;
const MAX_REDIRECTS = 5;

function parseAddress(text: string): Address {
  const colon = text.lastIndexOf(":");
  return { host: text.slice(0, colon).replace(/^\[|\]$/g, ""), port: Number(text.slice(colon + 1)) };
}

/**
 * A cluster: one connection per node, the slot map from CLUSTER SLOTS, and each command sent to the node owning its
 * key's slot (the commands of one node in one write). A MOVED reply updates the map and resends the command to the
 * named node (and the whole map is read again before the next call); an ASK reply resends it once, after ASKING,
 * to the importing node.
 */
class ClusterTransport implements Transport {
  private readonly connections = new Map<string, SingleTransport>();
  private slots: (string | undefined)[] | undefined;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly seeds: Address[],
    private readonly options: ConnectionOptions,
  ) {}

  private node(address: string): SingleTransport {
    let transport = this.connections.get(address);
    if (!transport) {
      const parsed = parseAddress(address);
      transport = new SingleTransport(() => Promise.resolve(parsed), this.options);
      this.connections.set(address, transport);
    }
    return transport;
  }

  private loadSlots(): Promise<void> {
    this.loading ??= (async () => {
      const problems: string[] = [];
      try {
        const known = [...new Set([...this.connections.keys(), ...this.seeds.map(formatAddress)])];
        for (const address of known) {
          try {
            const [reply] = await this.node(address).exec([["CLUSTER", "SLOTS"]]);
            if (!Array.isArray(reply)) {
              problems.push(`${address}: ${reply instanceof ReplyError ? reply.message : "no slot map"}`);
              continue;
            }
            const slots = new Array<string | undefined>(SLOT_COUNT);
            for (const range of reply) {
              if (!Array.isArray(range) || !Array.isArray(range[2])) continue;
              const [start, end, [host, port]] = range as [number, number, [string, number]];
              // An empty host means "the address you reached me on".
              const owner = host ? formatAddress({ host, port: Number(port) }) : address;
              for (let slot = start; slot <= end; slot++) slots[slot] = owner;
            }
            this.slots = slots;
            return;
          } catch (error) {
            problems.push(error instanceof Error ? error.message : String(error));
          }
        }
        throw new RedisError(`kvstore: no cluster node answered CLUSTER SLOTS (${problems.join("; ")})`, true);
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  isActive(): boolean {
    return [...this.connections.values()].some((connection) => connection.isActive());
  }

  async ensureConnected(): Promise<void> {
    if (!this.slots || !this.isActive()) await this.loadSlots();
  }

  async exec(commands: readonly Command[]): Promise<Reply[]> {
    if (!this.slots) await this.loadSlots();
    const slots = this.slots!;
    const replies = new Array<Reply>(commands.length);
    let pending = commands.map((command, index) => {
      const key = commandKey(command);
      const owner = key === undefined ? undefined : slots[keySlot(key)];
      return { index, owner: owner ?? formatAddress(this.seeds[0]), asking: false };
    });
    let remapped = false;
    for (let round = 0; pending.length > 0; round++) {
      const byNode = new Map<string, typeof pending>();
      for (const item of pending) {
        const group = byNode.get(item.owner) ?? [];
        group.push(item);
        byNode.set(item.owner, group);
      }
      const next: typeof pending = [];
      await Promise.all(
        [...byNode].map(async ([address, group]) => {
          const sent: Command[] = [];
          for (const item of group) {
            if (item.asking) sent.push(["ASKING"]);
            sent.push(commands[item.index]);
          }
          let answers: Reply[];
          try {
            answers = await this.node(address).exec(sent);
          } catch (error) {
            this.node(address).reset();
            this.slots = undefined;
            throw error;
          }
          let position = 0;
          for (const item of group) {
            if (item.asking) position++;
            const answer = answers[position++];
            const redirect = answer instanceof ReplyError ? REDIRECT.exec(answer.message) : null;
            if (redirect && round < MAX_REDIRECTS) {
              const [, kind, slot, target] = redirect;
              if (kind === "MOVED") {
                slots[Number(slot)] = target;
                remapped = true;
              }
              next.push({ index: item.index, owner: target, asking: kind === "ASK" });
            } else {
              replies[item.index] = answer;
            }
          }
        }),
      );
      pending = next;
    }
    // The map moved: read it whole before the next call (this call already followed the redirects).
    if (remapped) this.slots = undefined;
    return replies;
  }

  close(): void {
    for (const connection of this.connections.values()) connection.close();
    this.connections.clear();
  }
}
