// The bounds on a full-text search (store/full-text.ts): terms written again are searched once, and the largest search
// accepted is MAX_SEARCH_WORDS words, prefixes of MIN_PREFIX_LENGTH characters or more; the review's costly forms
// (166 "a*", a* to z*, 60 topics of 21 to 40 repeats of "the") are refused.
import { describe, expect, it } from "vitest";
import {
  ftsAnyOf,
  ftsQuery,
  MAX_SEARCH_WORDS,
  MIN_PREFIX_LENGTH,
  queryRefusal,
  topicsRefusal,
} from "../../../src/news/store/full-text";

const maxwords = { rule: "maxwords", limit: 16 };
const minprefix = { rule: "minprefix", limit: 3 };

/** `count` distinct prefixes of three letters: aaa*, aab*, ... */
const prefixes = (count: number) =>
  Array.from({ length: count }, (_, index) => `aa${String.fromCharCode(97 + (index % 26))}${"a".repeat(index / 26)}*`);

describe("a search's terms written again", () => {
  it("are searched once, whatever their case, in q and in OR groups", () => {
    expect(ftsQuery("abc* abc* ABC* iron Iron")).toBe('"abc"* AND "iron"');
    expect(ftsQuery("bhp OR rio bhp OR RIO bhp OR bhp OR rio")).toBe('("bhp" OR "rio")');
    expect(ftsQuery('"iron ore" "Iron ore" iron')).toBe('"iron ore" AND "iron"');
    expect(ftsQuery(Array(166).fill("abc*").join(" "))).toBe('"abc"*');
  });

  it("are one topic, whatever their case and punctuation", () => {
    expect(ftsAnyOf(["iron ore", "Iron, Ore", "lithium", "iron ore"])).toBe('"iron ore" OR "lithium"');
  });
});

describe("the largest search accepted", () => {
  it("is 16 words of q's distinct terms, each prefix of 3 characters", () => {
    expect([MAX_SEARCH_WORDS, MIN_PREFIX_LENGTH]).toEqual([16, 3]);
    const worst = [...prefixes(16), ...prefixes(16)].join(" ");
    expect(queryRefusal(worst)).toBeUndefined();
    expect(ftsQuery(worst)).toBe(
      prefixes(16)
        .map((prefix) => `"${prefix.slice(0, -1)}"*`)
        .join(" AND "),
    );
    expect(queryRefusal(prefixes(17).join(" "))).toEqual(maxwords);
    expect(queryRefusal(`"${Array(16).fill("the").join(" ")}"`)).toBeUndefined();
    expect(queryRefusal(`"${Array(17).fill("the").join(" ")}"`)).toEqual(maxwords);
    const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index}`);
    expect(queryRefusal(`${words(8).join(" OR ")} ${prefixes(8).join(" OR ")}`)).toBeUndefined();
    expect(queryRefusal(`${words(9).join(" OR ")} ${prefixes(8).join(" OR ")}`)).toEqual(maxwords);
  });

  it("refuses prefixes shorter than 3 characters, the review's 166 a* and a* to z* among them", () => {
    expect(queryRefusal(Array(166).fill("a*").join(" "))).toEqual(minprefix);
    expect(
      queryRefusal(
        "abcdefghijklmnopqrstuvwxyz"
          .split("")
          .map((letter) => `${letter}*`)
          .join(" "),
      ),
    ).toEqual(maxwords);
    expect(
      queryRefusal(
        "abcdefghijklmnop"
          .split("")
          .map((letter) => `${letter}*`)
          .join(" "),
      ),
    ).toEqual(minprefix);
    expect(queryRefusal("lithium ab*")).toEqual(minprefix);
    expect(queryRefusal("lit*")).toBeUndefined();
  });

  it("is 16 words over /search's distinct topics; the review's 60 topics of repeated 'the' are refused", () => {
    const sixteen = Array.from({ length: 96 }, (_, index) => `topic${index % 16}`);
    expect(topicsRefusal(sixteen)).toBeUndefined();
    expect(ftsAnyOf(sixteen)?.split(" OR ")).toHaveLength(16);
    expect(topicsRefusal([...sixteen, "topic16"])).toEqual(maxwords);
    expect(topicsRefusal(["iron ore", ...Array.from({ length: 14 }, (_, index) => `t${index}`)])).toBeUndefined();
    expect(topicsRefusal(["iron ore", ...Array.from({ length: 15 }, (_, index) => `t${index}`)])).toEqual(maxwords);
    const review = Array.from({ length: 60 }, (_, index) =>
      Array(21 + (index % 20))
        .fill("the")
        .join(" "),
    );
    expect(topicsRefusal(review)).toEqual(maxwords);
  });
});
