// Node discovery for the object cache from an SRV record, looked up through DNS over HTTPS (the JSON API that
// Cloudflare's and Google's resolvers answer): a Worker has no system resolver. The targets are sorted by priority,
// then name and port, so every instance derives the same node order and so the same key-to-node mapping.
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

export async function lookupSrv(name: string, dohUrl: string, timeoutMs: number): Promise<Address[]> {
  const url = `${dohUrl}${dohUrl.includes("?") ? "&" : "?"}name=${encodeURIComponent(name)}&type=SRV`;
  let body: { Status?: number; Answer?: DohAnswer[] };
  try {
    const response = await fetch(url, {
      headers: { accept: "application/dns-json" },
      signal: AbortSignal.timeout(Math.max(timeoutMs, 1000)),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    body = await response.json();
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
