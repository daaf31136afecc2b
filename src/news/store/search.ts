// GET /search's data: articles by topics and companies within a date window, newest first, with the query as run
// (defaults filled in) and what the caller left out or got wrong; routes/search.ts wraps it in the original envelope.
import type { Database } from "../../shared/db";
import { listArticles, type ArticleView } from "./articles";
import { companyView, findCompanies, type Company, type CompanyView } from "./companies";
import { ftsAnyOf } from "./full-text";

export const SEARCH_DEFAULT_LIMIT = 50;
const DEFAULT_WINDOW_YEARS = 5;

export interface SearchInput {
  topics?: string[];
  companyids?: string[];
  startDate?: Date;
  endDate?: Date;
  limit?: number;
  page: number;
  now: Date;
}

/** The query as run: each topic and company id once, and the window and limit filled in where left out. */
export interface SearchQuery {
  topics: string[];
  companyids: string[];
  startDate: Date;
  endDate: Date;
  limit: number;
  page: number;
  /** Which of the window's ends and the limit the caller left out (and got the default). */
  defaulted: { startDate: boolean; endDate: boolean; limit: boolean };
}

export interface SearchArticle extends Omit<ArticleView, "companies"> {
  companies: CompanyView[];
}

export interface SearchResult {
  query: SearchQuery;
  /** The companies asked for that exist, by ticker. */
  companies: CompanyView[];
  /** Company ids asked for that name no company, in the order given. */
  unknownCompanyIds: string[];
  /** False when the window ends before it starts (nothing is searched). */
  windowIsValid: boolean;
  /** One page of matches, newest first, each with its linked companies. */
  rows: SearchArticle[];
  /** Matches over every page. */
  total: number;
}

/** The query with its defaults: the last DEFAULT_WINDOW_YEARS up to now, SEARCH_DEFAULT_LIMIT articles. */
export function searchQuery(input: SearchInput): SearchQuery {
  const windowStart = new Date(input.now);
  windowStart.setUTCFullYear(windowStart.getUTCFullYear() - DEFAULT_WINDOW_YEARS);
  return {
    topics: [...new Set(input.topics ?? [])],
    companyids: [...new Set(input.companyids ?? [])],
    startDate: input.startDate ?? windowStart,
    endDate: input.endDate ?? input.now,
    limit: input.limit ?? SEARCH_DEFAULT_LIMIT,
    page: input.page,
    defaulted: { startDate: !input.startDate, endDate: !input.endDate, limit: input.limit === undefined },
  };
}

export async function searchArticles(db: Database, input: SearchInput): Promise<SearchResult> {
  const query = searchQuery(input);
  const companies = await findCompanies(db, query.companyids);
  const unknownCompanyIds = query.companyids.filter(
    (ticker) => !companies.some((company) => company.ticker === ticker),
  );
  const windowIsValid = query.endDate >= query.startDate;
  // Unknown tickers match nothing; asked only for unknown ones, the answer is empty rather than everything.
  const nothingCanMatch = !windowIsValid || (query.companyids.length > 0 && companies.length === 0);
  const { rows, total } = nothingCanMatch ? { rows: [], total: 0 } : await matchingArticles(db, query, companies);
  return { query, companies: companies.map(companyView), unknownCompanyIds, windowIsValid, rows, total };
}

/** One page of the articles matching the query, each with its linked companies' views. */
async function matchingArticles(
  db: Database,
  query: SearchQuery,
  companies: Company[],
): Promise<{ rows: SearchArticle[]; total: number }> {
  const listed = await listArticles(db, {
    match: query.topics.length > 0 ? (ftsAnyOf(query.topics) ?? null) : undefined,
    tickers: query.companyids.length > 0 ? companies.map((company) => company.ticker) : undefined,
    from: query.startDate,
    to: query.endDate,
    page: query.page,
    limit: query.limit,
    sort: [{ field: "publishedAt", descending: true }],
  });
  const linked = await findCompanies(db, [...new Set(listed.rows.flatMap((article) => article.companies))]);
  const views = new Map(linked.map((company) => [company.ticker, companyView(company)]));
  const rows = listed.rows.map((article) => ({
    ...article,
    companies: article.companies.map((ticker) => views.get(ticker)).filter((view) => view !== undefined),
  }));
  return { rows, total: listed.total };
}
