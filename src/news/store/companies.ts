// The ASX companies and the matcher that links an article to the companies it mentions, used alike by
// ingestion and by the admin article routes.
import { asc, sql } from "drizzle-orm";
import type { Database } from "../../shared/db";
import { companies } from "./tables";

export type Company = typeof companies.$inferSelect;

/** The company as /search shows it (the original's shape, without the Thomson Reuters PermID link). */
export interface CompanyView {
  ticker: string;
  name: string;
  shortName: string;
  websiteUrl: string | null;
}

export const companyView = (company: Company): CompanyView => ({
  ticker: company.ticker,
  name: company.name,
  shortName: company.shortName,
  websiteUrl: company.website,
});

export function listCompanies(db: Database): Promise<Company[]> {
  return db.select().from(companies).orderBy(asc(companies.ticker));
}

export function findCompanies(db: Database, tickers: string[]): Promise<Company[]> {
  if (tickers.length === 0) return Promise.resolve([]);
  // json_each keeps this one bound parameter however many tickers a caller lists (D1 allows 100 per statement).
  const inList = sql`${companies.ticker} IN (SELECT value FROM json_each(${JSON.stringify(tickers)}))`;
  return db.select().from(companies).where(inList).orderBy(asc(companies.ticker));
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A word written in capitals (two or more, no small letter), such as NAB, CAR or JB: an acronym. */
const isAcronym = (word: string) => !/\p{Ll}/u.test(word) && (word.match(/\p{Lu}/gu)?.length ?? 0) >= 2;

/** One character in either case, as a class of single characters (so no quantifier, nothing to backtrack over). */
function eitherCase(char: string): string {
  const forms = new Set([char, char.toLowerCase(), char.toUpperCase()].filter((form) => [...form].length === 1));
  return forms.size > 1 ? `[${[...forms].join("")}]` : escapeRegExp(char);
}

/**
 * A name's word: an acronym only as written ("nab" and "car" in small letters are ordinary words: "police nab suspect",
 * "the car group"), any other word in any case (so that a name starts a sentence or fills a headline in capitals).
 */
const wordPattern = (word: string) => (isAcronym(word) ? escapeRegExp(word) : [...word].map(eitherCase).join(""));

/** A term as a whole word: not preceded or followed by a letter or digit (so "ANZ" does not match "ANZAC"). */
const wholeWord = (term: string) =>
  `(?<![\\p{L}\\p{N}])${term.trim().split(/\s+/).map(wordPattern).join("\\s+")}(?![\\p{L}\\p{N}])`;

/**
 * Builds a function returning the tickers an article text mentions. A company is mentioned by its name or one of
 * its aliases (whole words; acronyms as written, other words in any case) or by its exchange-qualified ticker, as
 * written: "ASX: BHP", "ASX:BHP" or "BHP.AX". A bare ticker alone is not enough (ALL, SUN, ORG or CAR are ordinary
 * words), nor one in small letters after "ASX:" ("ASX: all sectors fall" names no company).
 */
export function companyMatcher(list: Company[]): (text: string) => string[] {
  const patterns = list.map((company) => {
    const terms = [company.name, ...company.aliases].filter((term) => term.trim().length > 0).map(wholeWord);
    const ticker = escapeRegExp(company.ticker);
    terms.push(
      `(?<![\\p{L}\\p{N}])ASX\\s*:\\s*${ticker}(?![\\p{L}\\p{N}])`,
      `(?<![\\p{L}\\p{N}])${ticker}\\.AX(?![\\p{L}\\p{N}])`,
    );
    // No "i" flag: case is decided per word above. The terms are escaped literals, classes and \s+, with no nested
    // quantifier, so a match is linear in the text.
    return { ticker: company.ticker, pattern: new RegExp(terms.join("|"), "u") };
  });
  return (text) => patterns.filter(({ pattern }) => pattern.test(text)).map(({ ticker }) => ticker);
}
