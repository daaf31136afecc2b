// Publishers' answers are hostile input too (plain Node): a feed or API page is read within MAX_PUBLISHER_BYTES while
// it streams, whatever length it declares, and must be UTF-8.
import { describe, expect, it } from "vitest";
import { fetchFeed } from "../../../src/news/ingest/feed";
import { fetchJson, MAX_PUBLISHER_BYTES, PublisherError } from "../../../src/news/ingest/types";
import { bytes } from "../../support/byte-strings";

/** A response streamed in 64 KiB chunks with no Content-Length, counting how many bytes were pulled from it. */
function streamed(total: number, fill = 0x20) {
  const pulled = { bytes: 0 };
  const chunk = new Uint8Array(64 * 1024).fill(fill);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.bytes >= total) return controller.close();
      pulled.bytes += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { response: new Response(body, { headers: { "content-type": "application/rss+xml" } }), pulled };
}

const since = new Date(0);

describe("publisher answers", () => {
  it("stops reading a feed that streams past the limit, without a declared length", async () => {
    const { response, pulled } = streamed(50 * MAX_PUBLISHER_BYTES);
    await expect(
      fetchFeed({ fetch: async () => response, url: "https://feeds.example/big.xml", since }),
    ).rejects.toEqual(
      new PublisherError(`feed https://feeds.example/big.xml is larger than ${MAX_PUBLISHER_BYTES} bytes`),
    );
    expect(pulled.bytes).toBeLessThanOrEqual(MAX_PUBLISHER_BYTES + 2 * 64 * 1024);
  });

  it("refuses a feed whose declared length is over the limit before reading it", async () => {
    const { response, pulled } = streamed(MAX_PUBLISHER_BYTES);
    const declared = new Response(response.body, { headers: { "content-length": String(MAX_PUBLISHER_BYTES + 1) } });
    await expect(fetchFeed({ fetch: async () => declared, url: "https://feeds.example/a.xml", since })).rejects.toEqual(
      new PublisherError(`feed https://feeds.example/a.xml is larger than ${MAX_PUBLISHER_BYTES} bytes`),
    );
    expect(pulled.bytes).toBeLessThanOrEqual(64 * 1024);
  });

  it("refuses a feed that is not UTF-8", async () => {
    const xml = bytes("<rss><channel><title>", [0xc3, 0x28], "</title></channel></rss>");
    await expect(
      fetchFeed({ fetch: async () => new Response(xml), url: "https://feeds.example/b.xml", since }),
    ).rejects.toEqual(new PublisherError("feed https://feeds.example/b.xml is not valid UTF-8"));
  });

  it("applies the same limit to a JSON API page, naming the publisher and not the URL", async () => {
    const { response } = streamed(2 * MAX_PUBLISHER_BYTES);
    await expect(fetchJson(async () => response, "guardian", "https://api.example/?api-key=secret")).rejects.toEqual(
      new PublisherError(`guardian's answer is larger than ${MAX_PUBLISHER_BYTES} bytes`),
    );
    expect(
      await fetchJson(async () => Response.json({ ok: 1 }), "guardian", "https://api.example/?api-key=secret"),
    ).toEqual({ ok: 1 });
  });
});
