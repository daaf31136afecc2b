// The news store's text helpers: HTML to text, abstracts, fingerprints, the company matcher, full-text queries.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ftsAnyOf, ftsQuery } from "../../../src/news/store/full-text";
import { companyMatcher, listCompanies } from "../../../src/news/store/companies";
import { articleFingerprint, htmlToText, makeAbstract } from "../../../src/news/store/text";
import { md5Hex } from "../../../src/shared/bytes";
import { database } from "../../../src/shared/db";

describe("htmlToText", () => {
  it("removes tags, comments, scripts and styles, decodes entities and collapses white space", () => {
    expect(
      htmlToText(
        "<p>Shares in <a href='x'>BHP</a>\n\n rose&nbsp;2%</p><script>alert(1)</script><style>p{}</style><!-- ad -->",
      ),
    ).toBe("Shares in BHP rose 2%");
    expect(
      htmlToText("Australia&#8217;s &#x2018;big four&#x2019; &amp; the RBA &lt;3 &quot;cuts&quot; &unknown;"),
    ).toBe('Australia’s ‘big four’ & the RBA <3 "cuts" &unknown;');
    expect(htmlToText("a < b and c > d")).toBe("a < b and c > d");
  });
});

describe("makeAbstract", () => {
  it("keeps text of 256 characters or fewer as it is", () => {
    const text = "x".repeat(256);
    expect(makeAbstract(`<p>${text}</p>`)).toBe(text);
  });

  it('cuts longer text to 256 characters and adds " ..."', () => {
    const text = "word ".repeat(100);
    const abstract = makeAbstract(text);
    // 51 words and their spaces are 255 characters; the 256th is the "w" of the 52nd word.
    expect(abstract).toBe(`${"word ".repeat(51)}w ...`);
  });

  it("never splits a character made of two UTF-16 units", () => {
    const abstract = makeAbstract("📈".repeat(300));
    expect(abstract).toBe(`${"📈".repeat(256)} ...`);
  });
});

describe("fingerprints", () => {
  it("are md5 hex digests of title + source", async () => {
    expect(await md5Hex("")).toBe("d41d8cd98f00b204e9800998ecf8427e");
    expect(await md5Hex("The quick brown fox jumps over the lazy dog")).toBe("9e107d9d372bb6826bd81d3542a419d6");
    expect(await articleFingerprint("BHP lifts guidance", "guardian")).toBe(await md5Hex("BHP lifts guidanceguardian"));
  });
});

describe("companyMatcher over the seeded companies", () => {
  it("seeds at least the 50 largest ASX companies", async () => {
    const companies = await listCompanies(database(env.DB));
    expect(companies.length).toBeGreaterThanOrEqual(50);
    expect(companies.map((company) => company.ticker)).toEqual(
      expect.arrayContaining(["BHP", "CBA", "CSL", "NAB", "WBC", "ANZ", "WES", "MQG", "RIO", "WDS"]),
    );
  });

  it("links by name, alias and exchange-qualified ticker, as whole words in any case", async () => {
    const match = companyMatcher(await listCompanies(database(env.DB)));
    expect(match("BHP and Rio Tinto lift output")).toEqual(["BHP", "RIO"]);
    expect(match("commonwealth   bank raises rates")).toEqual(["CBA"]);
    expect(match("Shares in Origin Energy fell")).toEqual(["ORG"]);
    expect(match("Aristocrat (ASX: ALL) and S32.AX rose")).toEqual(["ALL", "S32"]);
    expect(match("JB Hi-Fi and Fisher & Paykel Healthcare report")).toEqual(["FPH", "JBH"]);
    expect(match("Woodside Energy Group (ASX:WDS)")).toEqual(["WDS"]);
  });

  it("does not link ordinary words, bare tickers or words that merely contain a name", async () => {
    const match = companyMatcher(await listCompanies(database(env.DB)));
    expect(match("The origin of all our troubles: the sun, the car and the wow factor")).toEqual([]);
    expect(match("Anzac Day marches; a cochlear implant; mineral resources of the state")).toEqual([]);
    expect(match("BHPX is not BHP's ticker")).toEqual(["BHP"]);
  });

  it("links acronyms and exchange-qualified tickers only as written, other words of a name in any case", async () => {
    const match = companyMatcher(await listCompanies(database(env.DB)));
    expect(match("Police nab suspect after week-long manhunt")).toEqual([]);
    expect(match("Stellantis, the car group behind Jeep and Peugeot, cuts jobs")).toEqual([]);
    expect(match("ASX: all sectors fall as tech sell-off deepens")).toEqual([]);
    expect(match("asx: sun shines")).toEqual([]);
    expect(match("ASX: sun and ASX:Sun, all.AX and s32.ax")).toEqual([]);
    expect(match("NAB lifts profit; CAR Group buys a rival; ASX: SUN and ALL.AX rise")).toEqual([
      "ALL",
      "CAR",
      "NAB",
      "SUN",
    ]);
    expect(match("CAR group and Jb Hi-Fi")).toEqual(["CAR"]);
    expect(match("National australia BANK and JB HI-FI: WESTPAC CUTS RATES")).toEqual(["JBH", "NAB", "WBC"]);
    expect(match("Carsales, then QANTAS, then bluescope")).toEqual(["BSL", "CAR", "QAN"]);
  });
});

describe("full-text queries", () => {
  it("quote every term so that input is never FTS5 syntax", () => {
    expect(ftsQuery("iron ore")).toBe('"iron" AND "ore"');
    expect(ftsQuery('"iron ore" exports')).toBe('"iron ore" AND "exports"');
    expect(ftsQuery("lith*")).toBe('"lith"*');
    expect(ftsQuery("westpac OR qantas bank")).toBe('("westpac" OR "qantas") AND "bank"');
    expect(ftsQuery("OR bhp")).toBe('"bhp"');
    expect(ftsQuery('title:"x" NEAR(a b)')).toBe('"title x" AND "NEAR a" AND "b"');
    expect(ftsQuery("!!! ???")).toBeUndefined();
  });

  it("match any topic for /search", () => {
    expect(ftsAnyOf(["iron ore", "lithium", "?"])).toBe('"iron ore" OR "lithium"');
    expect(ftsAnyOf(["?"])).toBeUndefined();
  });
});
