// Properties of the Guardian and NYT adapters (plain Node): whatever JSON a page's items hold, the page is read, one item
// per entry, each with the types the run's normalisation expects, so one malformed item never fails a run.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fetchGuardian } from "../../../src/news/ingest/guardian";
import { fetchNyt } from "../../../src/news/ingest/nyt";
import type { Fetcher, PublisherItem } from "../../../src/news/ingest/types";
import { htmlToText, makeAbstract } from "../../../src/news/store/text";

const NOW = new Date("2026-11-20T12:00:00Z");

/** Any JSON value, leaning towards the shapes of real items so that nested fields are reached. */
const json = fc.jsonValue({ maxDepth: 3 });
const guardianItem = fc.oneof(
  json,
  fc.record(
    {
      webTitle: json,
      webUrl: json,
      webPublicationDate: json,
      fields: fc.oneof(json, fc.record({ trailText: json, thumbnail: json })),
    },
    { requiredKeys: [] },
  ),
);
const image = fc.oneof(json, fc.record({ url: json, subtype: json }, { requiredKeys: [] }));
const nytItem = fc.oneof(
  json,
  fc.record(
    {
      web_url: json,
      abstract: json,
      snippet: json,
      lead_paragraph: json,
      pub_date: json,
      headline: fc.oneof(json, fc.record({ main: json }, { requiredKeys: [] })),
      multimedia: fc.oneof(
        json,
        fc.array(image),
        fc.record({ default: image, thumbnail: image }, { requiredKeys: [] }),
      ),
    },
    { requiredKeys: [] },
  ),
);

const answering =
  (body: unknown): Fetcher =>
  async () =>
    Response.json(body);

/** An item the run can normalise: strings where it reads text, a Date or nothing for the date. */
function expectUsableShape(item: PublisherItem) {
  expect(typeof item.title).toBe("string");
  expect(typeof item.url).toBe("string");
  expect(typeof item.abstractHtml).toBe("string");
  expect(typeof item.source).toBe("string");
  expect(item.thumbnail === undefined || typeof item.thumbnail === "string").toBe(true);
  expect(item.publishedAt === undefined || item.publishedAt instanceof Date).toBe(true);
  htmlToText(item.title);
  makeAbstract(item.abstractHtml);
}

describe("the API adapters on arbitrary items", () => {
  it("reads every Guardian result, whatever it holds", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(guardianItem, { maxLength: 8 }), async (results) => {
        const body = { response: { status: "ok", pages: 1, results } };
        const { items, warnings } = await fetchGuardian({
          fetch: answering(body),
          apiKey: "k",
          keywords: ["BHP"],
          since: NOW,
        });
        expect(items).toHaveLength(results.length);
        expect(warnings).toEqual([]);
        items.forEach(expectUsableShape);
      }),
      { numRuns: 200 },
    );
  });

  it("reads every NYT document, whatever it holds", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(nytItem, { maxLength: 8 }), async (docs) => {
        const body = { status: "OK", response: { docs, meta: { hits: docs.length } } };
        const { items } = await fetchNyt({
          fetch: answering(body),
          apiKey: "k",
          keywords: ["BHP"],
          since: NOW,
          now: NOW,
        });
        expect(items).toHaveLength(docs.length);
        items.forEach(expectUsableShape);
      }),
      { numRuns: 200 },
    );
  });
});
