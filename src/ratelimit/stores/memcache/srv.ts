// Node discovery for the object cache from an SRV record, looked up through DNS over HTTPS (the JSON API that
// Cloudflare's and Google's resolvers answer): a Worker has no system resolver. The targets are sorted by priority,
// then name and port, so every instance derives the same node order and so the same key-to-node mapping.
import { fetchWithin, readAnswerText } from "../../../shared/http/bounded-fetch";
import type { Address } from "../socket";
import { MemcacheError } from "./protocol";

interface DohAnswer {
  type: number;
  data: string;
}

const SRV_TYPE = 33;

/** Parses the `data` of SRV answers ("priority weight port target."), sorted as described above. */
export function parseSrvAnswers(answers: readonly DohAnswer[]): Address[] {
  const records = answers
    .filter((answer) => answer.type === SRV_TYPE)
    .map((answer) => answer.data.trim().split(/\s+/))
    .filter((fields) => fields.length === 4 && fields[3] !== ".")
    .map(([priority, , port, target]) => ({
      priority: Number(priority),
      host: target.replace(/\.$/, ""),
      port: Number(port),
    }));
  records.sort((a, b) => a.priority - b.priority || (a.host < b.host ? -1 : a.host > b.host ? 1 : a.port - b.port));
  return records.map(({ host, port }) => ({ host, port }));
}

/**
 * Largest DNS-over-HTTPS answer read. An SRV record set fits one DNS message (at most 65,535 bytes), and the object
 * cache's few nodes take a few hundred bytes of JSON; an answer past this bound is refused, unread beyond it.
 */
export const MAX_SRV_ANSWER_BYTES = 65_536;

/**
 * The resolver's answer as JSON, read within MAX_SRV_ANSWER_BYTES. A failure is an Error whose message says why: no
 * answer (a NoAnswer, the time-out's or the runtime's words), a failure status, an answer too large or not UTF-8.
 */
async function resolverAnswer(url: string, timeoutMs: number): Promise<unknown> {
  const init = { headers: { accept: "application/dns-json" } };
  const response = await fetchWithin(fetch, url, init, timeoutMs, (failure) => failure);
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw new Error(`HTTP ${response.status}`);
  }
  const text = await readAnswerText(response, MAX_SRV_ANSWER_BYTES, {
    refused: (why) =>
      new Error(
        why === "too large"
          ? `the answer is larger than ${MAX_SRV_ANSWER_BYTES} bytes (MAX_SRV_ANSWER_BYTES)`
          : "the answer is not valid UTF-8",
      ),
    unanswered: (failure) => failure,
  });
  return JSON.parse(text);
}

export async function lookupSrv(name: string, dohUrl: string, timeoutMs: number): Promise<Address[]> {
  const url = `${dohUrl}${dohUrl.includes("?") ? "&" : "?"}name=${encodeURIComponent(name)}&type=SRV`;
  let body: { Status?: number; Answer?: DohAnswer[] };
  try {
    body = (await resolverAnswer(url, Math.max(timeoutMs, 1000))) as typeof body;
  } catch (error) {
    throw new MemcacheError(
      `objcache: SRV lookup of ${name} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const nodes = parseSrvAnswers(body.Answer ?? []);
  if (body.Status !== 0 || nodes.length === 0)
    throw new MemcacheError(`objcache: SRV record ${name} names no node (DNS status ${body.Status})`);
  return nodes;
}
