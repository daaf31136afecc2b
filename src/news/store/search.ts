// GET /search, the original product endpoint: articles by topics and companies within a date window, wrapped in
// {status, version, startTime, endTime, elapsedTime, parameters, warnings, companies, data} with warnings for
// what the caller left out.
import { version as packageVersion } from "../../../package.json";
import type { Database } from "../../shared/db";
import { listArticles, type ArticleView } from "./articles";
import { companyView, findCompanies, type CompanyView } from "./companies";
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

export interface SearchArticle extends Omit<ArticleView, "companies"> {
  companies: CompanyView[];
}

export interface SearchResponse {
  status: 200;
  version: string;
  startTime: string;
  endTime: string;
  /** Seconds. */
  elapsedTime: number;
  parameters: {
    topics: string[];
    companyids: string[];
    start_date: string;
    end_date: string;
    limit: number;
    page: number;
  };
  warnings: string[];
  companies: CompanyView[];
  data: SearchArticle[];
}

export async function searchArticles(
  db: Database,
  input: SearchInput,
): Promise<{ body: SearchResponse; total: number }> {
  const started = Date.now();
  const warnings: string[] = [];
  const windowStart = new Date(input.now);
  windowStart.setUTCFullYear(windowStart.getUTCFullYear() - DEFAULT_WINDOW_YEARS);
  const startDate = input.startDate ?? windowStart;
  const endDate = input.endDate ?? input.now;
  if (!input.startDate) warnings.push("Start time not specified.");
  if (!input.endDate) warnings.push("End time not specified.");
  if (input.limit === undefined)
    warnings.push(`Limit not set, defaulting to limit to ${SEARCH_DEFAULT_LIMIT} articles.`);
  const limit = input.limit ?? SEARCH_DEFAULT_LIMIT;
  const topics = [...new Set(input.topics ?? [])];
  const companyids = [...new Set(input.companyids ?? [])];
  if (topics.length === 0) warnings.push("Topics not specified.");
  if (companyids.length === 0) warnings.push("Company Ids not specified.");

  const companies = await findCompanies(db, companyids);
  for (const ticker of companyids) {
    if (!companies.some((company) => company.ticker === ticker)) warnings.push(`Company id ${ticker} not found.`);
  }

  let data: SearchArticle[] = [];
  let total = 0;
  const windowIsValid = endDate >= startDate;
  if (!windowIsValid) warnings.push("End date cannot be before start date.");
  // Unknown tickers match nothing; asked only for unknown ones, the answer is empty rather than everything.
  const nothingCanMatch = !windowIsValid || (companyids.length > 0 && companies.length === 0);
  if (!nothingCanMatch) {
    const listed = await listArticles(db, {
      match: topics.length > 0 ? (ftsAnyOf(topics) ?? null) : undefined,
      tickers: companyids.length > 0 ? companies.map((company) => company.ticker) : undefined,
      from: startDate,
      to: endDate,
      page: input.page,
      limit,
      sort: [{ field: "publishedAt", descending: true }],
    });
    total = listed.total;
    const linked = await findCompanies(db, [...new Set(listed.rows.flatMap((article) => article.companies))]);
    const views = new Map(linked.map((company) => [company.ticker, companyView(company)]));
    data = listed.rows.map((article) => ({
      ...article,
      companies: article.companies.map((ticker) => views.get(ticker)).filter((view) => view !== undefined),
    }));
  }

  const ended = Date.now();
  return {
    total,
    body: {
      status: 200,
      version: packageVersion,
      startTime: new Date(started).toISOString(),
      endTime: new Date(ended).toISOString(),
      elapsedTime: (ended - started) / 1000,
      parameters: {
        topics,
        companyids,
        start_date: startDate.toISOString(),
        end_date: endDate.toISOString(),
        limit,
        page: input.page,
      },
      warnings,
      companies: companies.map(companyView),
      data,
    },
  };
}
