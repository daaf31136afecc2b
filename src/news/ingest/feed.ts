// RSS 2.0 and Atom 1.0 feed adapter (fast-xml-parser): the items published since the last run. A feed always
// lists its latest items, so older ones (already stored by an earlier run) are left out here.
import { XMLParser } from "fast-xml-parser";
import { httpUrl } from "../store/text";
import {
  fetchPublisherText,
  parseDate,
  PublisherError,
  quoted,
  sourceOfUrl,
  type AdapterResult,
  type Fetcher,
  type PublisherItem,
} from "./types";

/** More than any feed lists; a larger document is refused rather than parsed. */
const MAX_ITEMS = 500;

const ALWAYS_LISTS = new Set(["item", "entry", "link", "media:content", "media:thumbnail", "enclosure"]);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  isArray: (name) => ALWAYS_LISTS.has(name),
  // Entities declared by the document itself are expanded with the parser's limits; external ones never are.
  processEntities: true,
  htmlEntities: true,
});

type Node = Record<string, unknown>;

const asNode = (value: unknown): Node | undefined =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Node) : undefined;
const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]);

/** The text of an element that may carry attributes ({"#text": ..., "@_type": "html"}). */
function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  const node = asNode(value);
  return node && typeof node["#text"] === "string" ? node["#text"] : "";
}

const attribute = (value: unknown, name: string): string | undefined => {
  const found = asNode(value)?.[`@_${name}`];
  return typeof found === "string" ? found : undefined;
};

/** The first image among media:thumbnail, media:content (image) and enclosure (image/*). */
function imageOf(item: Node): string | undefined {
  const candidates = [
    ...asList(item["media:thumbnail"]).map((node) => attribute(node, "url")),
    ...asList(asNode(item["media:group"])?.["media:thumbnail"]).map((node) => attribute(node, "url")),
    // MRSS makes medium and type optional; the Guardian's feeds give neither, only url and width.
    ...asList(item["media:content"])
      .filter((node) => {
        const medium = attribute(node, "medium");
        const type = attribute(node, "type");
        return medium === "image" || (type ?? "").startsWith("image/") || (medium === undefined && type === undefined);
      })
      .map((node) => attribute(node, "url")),
    ...asList(item.enclosure)
      .filter((node) => (attribute(node, "type") ?? "").startsWith("image/"))
      .map((node) => attribute(node, "url")),
  ];
  return candidates.map(httpUrl).find((url) => url !== undefined);
}

/** An absolute http(s) URL for a link that may be relative to the feed; "" when there is none (the run skips it). */
function resolveLink(link: string | undefined, base: string): string {
  if (!link || !URL.canParse(link, base)) return "";
  return httpUrl(new URL(link, base).href) ?? "";
}

function rssItem(item: Node, base: string, source: string): PublisherItem {
  const permalink = attribute(item.guid, "isPermaLink") !== "false" ? textOf(item.guid) : "";
  const link = asList(item.link).map(textOf).find(Boolean) ?? permalink;
  const url = resolveLink(link, base);
  return {
    title: textOf(item.title),
    url,
    abstractHtml: textOf(item.description) || textOf(item["content:encoded"]),
    thumbnail: imageOf(item),
    publishedAt: parseDate(textOf(item.pubDate) || textOf(item["dc:date"])),
    source,
  };
}

function atomEntry(entry: Node, base: string, source: string): PublisherItem {
  const links = asList(entry.link);
  const alternate = links.find((link) => (attribute(link, "rel") ?? "alternate") === "alternate") ?? links[0];
  const url = resolveLink(attribute(alternate, "href"), base);
  return {
    title: textOf(entry.title),
    url,
    abstractHtml: textOf(entry.summary) || textOf(entry.content),
    thumbnail: imageOf(entry),
    publishedAt: parseDate(textOf(entry.published) || textOf(entry.updated)),
    source,
  };
}

/** Parses an RSS 2.0 or Atom document into items; throws PublisherError for anything else. */
export function parseFeed(xml: string, feedUrl: string): PublisherItem[] {
  let document: Node;
  try {
    // true: validate first, so that a truncated or broken document is refused rather than half read.
    document = parser.parse(xml, true) as Node;
  } catch (error) {
    throw new PublisherError(
      `feed ${feedUrl} is not well-formed XML: ${quoted(error instanceof Error ? error.message : String(error))}`,
    );
  }
  const nodes = (list: unknown) =>
    asList(list)
      .slice(0, MAX_ITEMS)
      .map((node) => asNode(node) ?? {});
  // Every item is stored under the feed's own source (guardian and nyt for their sites, else its host), never one its
  // link names: a feed speaks only for itself. A fingerprint is md5(title + source), so a feed whose item claimed a
  // theguardian.com link could otherwise rewrite the Guardian's stories, or forge new ones under its name.
  const source = sourceOfUrl(feedUrl);
  const rss = asNode(asNode(document.rss)?.channel);
  if (rss) return nodes(rss.item).map((item) => rssItem(item, feedUrl, source));
  const atom = asNode(document.feed);
  if (atom) return nodes(atom.entry).map((entry) => atomEntry(entry, feedUrl, source));
  throw new PublisherError(`feed ${feedUrl} is neither RSS 2.0 nor Atom`);
}

const FEED_TYPES = "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.8";

export async function fetchFeed(input: { fetch: Fetcher; url: string; since: Date }): Promise<AdapterResult> {
  const what = `feed ${input.url}`;
  const xml = await fetchPublisherText(input.fetch, { what, url: input.url, accept: FEED_TYPES, answer: what });
  const all = parseFeed(xml, input.url);
  // Items without a date cannot be placed in time: keep them (storing is idempotent by fingerprint).
  const items = all.filter((item) => !item.publishedAt || item.publishedAt >= input.since);
  return { items, warnings: [] };
}
