// The hot-key bench's wrk runner against a real wrk (a system program npm test installs): it posts the body with its
// content type and counts 2xx and other answers from wrk's own summary.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { wrkRun } from "../../bench/load-runners.mjs";

describe("a wrk run", () => {
  it("posts the body with its content type and counts 2xx and other answers", async () => {
    const seen = new Set<string>();
    const server = http.createServer((request, response) => {
      let text = "";
      request.on("data", (chunk) => (text += chunk));
      request.on("end", () => {
        seen.add(`${request.method} ${request.headers["content-type"]} ${text}`);
        response.writeHead(text.includes('"refuse"') ? 429 : 200).end("ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/json`;
    try {
      const admitted = await wrkRun({ url, method: "POST", body: '{"domain":"hot"}', connections: 2, duration: 1 });
      expect(admitted.answered).toBeGreaterThan(0);
      expect(admitted).toMatchObject({ decisions: admitted.answered, bad: 0, codes: "" });
      const refused = await wrkRun({ url, method: "POST", body: '{"domain":"refuse"}', connections: 2, duration: 1 });
      expect(refused).toMatchObject({ decisions: 0, bad: refused.answered, codes: ` non-2xx×${refused.answered}` });
      expect([...seen].sort()).toEqual([
        'POST application/json {"domain":"hot"}',
        'POST application/json {"domain":"refuse"}',
      ]);
    } finally {
      server.close();
    }
  }, 20_000);
});
