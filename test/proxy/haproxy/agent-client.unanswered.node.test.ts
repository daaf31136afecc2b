// An agent that gives no usable answer (plain Node): the whole exchange, body included, ends within the call's
// time-out, silence and failed connections are "unreachable", and an answer too long or not UTF-8 is "refused", unread.
import { describe, expect, it } from "vitest";
import { AgentError, agentStatus, checkWithAgent } from "../../../src/proxy/haproxy/agent-client";

const AGENT = "http://lb.test:9400";
const TIMEOUT_MS = 50;

/** What agentStatus threw, asked with `fetcher` and a 50 ms time-out. */
const failureOf = (fetcher: typeof fetch) =>
  agentStatus(fetcher, { agentUrl: AGENT, token: "t", timeoutMs: TIMEOUT_MS }).then(
    () => expect.unreachable("the agent's answer was taken"),
    (error: unknown) => error,
  );

const expectAgentError = (error: unknown, reason: AgentError["reason"], message: string) => {
  expect(error).toBeInstanceOf(AgentError);
  expect(error).toMatchObject({ reason, message, alerts: [] });
};

/** A reason of the request's signal, once it fires: what the runtime's fetch gives an agent that never answers. */
const whenAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));

/** A body stream that records how often it was read (nothing is pulled before a read) and whether it was cancelled. */
function watchedBody(source: UnderlyingSource<Uint8Array>) {
  const watched = { cancelled: false, pulls: 0 };
  const pull = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    watched.pulls += 1;
    return source.pull?.(controller);
  };
  const cancel = () => {
    watched.cancelled = true;
  };
  const body = new ReadableStream<Uint8Array>({ ...source, pull, cancel }, { highWaterMark: 0 });
  return { body, watched };
}

const chunks = (controller: ReadableStreamDefaultController<Uint8Array>) => controller.enqueue(new Uint8Array(65_536));

describe("an agent that gives no answer", () => {
  it("is unreachable, naming the failed connection", async () => {
    const refused = () => Promise.reject(new Error("connection refused"));
    expectAgentError(await failureOf(refused), "unreachable", `agent ${AGENT} is unreachable: connection refused`);
  });

  it("is unreachable after the time-out when it never answers", async () => {
    const silent: typeof fetch = (_url, init) => whenAborted(init!.signal!);
    const message = `agent ${AGENT} is unreachable: no answer within ${TIMEOUT_MS} ms`;
    expectAgentError(await failureOf(silent), "unreachable", message);
  });

  it("is unreachable after the same time-out when its body never ends", async () => {
    const trickling: typeof fetch = async (_url, init) => {
      const { body } = watchedBody({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"version": '));
          whenAborted(init!.signal!).catch((reason) => controller.error(reason));
        },
      });
      return new Response(body);
    };
    const message = `agent ${AGENT} is unreachable: no answer within ${TIMEOUT_MS} ms`;
    expectAgentError(await failureOf(trickling), "unreachable", message);
  });

  it("is unreachable, naming the failure, when its body breaks off", async () => {
    const broken: typeof fetch = async () => {
      const { body } = watchedBody({ start: (controller) => controller.error(new Error("Network connection lost.")) });
      return new Response(body);
    };
    const message = `agent ${AGENT} is unreachable: Network connection lost.`;
    expectAgentError(await failureOf(broken), "unreachable", message);
  });
});

describe("an agent that stops as it checks", () => {
  it("is unreachable, it is stopping, when it answers 503 agentStopping", async () => {
    const stopping = async () =>
      Response.json({ error: "the check was stopped: the agent is stopping", agentStopping: true }, { status: 503 });
    const checked = checkWithAgent(stopping, {
      agentUrl: AGENT,
      token: "t",
      timeoutMs: TIMEOUT_MS,
      digest: "d",
      files: {},
    });
    const error = await checked.then(
      () => expect.unreachable("a verdict was read"),
      (failure: unknown) => failure,
    );
    expectAgentError(error, "unreachable", `agent ${AGENT} is unreachable: it is stopping (HTTP 503)`);
  });
});

describe("an agent's answer that cannot be one", () => {
  it("is refused unread when its declared length is past 65536 bytes", async () => {
    const { body, watched } = watchedBody({ pull: chunks });
    const long = async () => new Response(body, { status: 200, headers: { "content-length": "65537" } });
    const message = `agent ${AGENT} answered HTTP 200 with more than 65536 bytes`;
    expectAgentError(await failureOf(long), "refused", message);
    expect(watched).toEqual({ cancelled: true, pulls: 0 });
  });

  it("is refused at the first chunk past 65536 bytes of a streamed answer", async () => {
    const { body, watched } = watchedBody({ pull: chunks });
    const endless = async () => new Response(body, { status: 502 });
    const message = `agent ${AGENT} answered HTTP 502 with more than 65536 bytes`;
    expectAgentError(await failureOf(endless), "refused", message);
    expect(watched).toEqual({ cancelled: true, pulls: 2 });
  });

  it("is refused when it is not UTF-8", async () => {
    const latin1 = async () => new Response(new Uint8Array([0x7b, 0xe9, 0x7d]), { status: 200 });
    const message = `agent ${AGENT} answered HTTP 200 with bytes that are not UTF-8`;
    expectAgentError(await failureOf(latin1), "refused", message);
  });
});
