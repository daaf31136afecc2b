// GET /search: a date window's articles matched by topics (full text) and company tickers, warnings and paging.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import packageJson from "../../../package.json";
import { call } from "../../support/worker-http";
import { seedArticles } from "../../support/news-articles";
import { getJson, signUp } from "../../support/news-api";
import { telstraArticleView } from "../../support/news-article-views";

// A fixed clock: the default window is [now - 5 years, now] and the reply carries times.
const NOW = new Date("2026-06-01T00:00:00Z");

let token: string;

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(NOW);
  await seedArticles();
  token = (await signUp("search-reader@example.com")).token;
});

afterAll(() => {
  vi.useRealTimers();
});

interface SearchBody {
  status: number;
  version: string;
  maintainer: string;
  startTime: string;
  endTime: string;
  elapsedTime: number;
  parameters: Record<string, unknown>;
  warnings: string[];
  companies: { ticker: string }[];
  data: { title: string; companies: { ticker: string }[] }[];
}

async function search(query: string) {
  const response = await getJson(`/search${query}`, token);
  const body = (await response.json()) as SearchBody;
  return {
    status: response.status,
    total: response.headers.get("X-Total-Count"),
    body,
    titles: body.data?.map((article) => article.title),
  };
}

const company = (ticker: string, name: string, shortName: string, websiteUrl: string) => ({
  ticker,
  name,
  shortName,
  websiteUrl,
});
const BHP = company("BHP", "BHP Group", "BHP", "https://www.bhp.com");
const RIO = company("RIO", "Rio Tinto", "Rio Tinto", "https://www.riotinto.com");
const CBA = company("CBA", "Commonwealth Bank of Australia", "CommBank", "https://www.commbank.com.au");

describe("GET /search", () => {
  it("needs a signed-in user", async () => {
    const response = await call("/search");
    expect(response.status).toBe(401);
  });

  it("without topics or companies answers the window's articles, newest first, with every warning", async () => {
    const { status, total, body } = await search("?limit=2");
    expect(status).toBe(200);
    expect(total).toBe("36");
    expect(body).toEqual({
      status: 200,
      version: packageJson.version,
      maintainer: "Team Wombat",
      startTime: "2026-06-01T00:00:00.000Z",
      endTime: "2026-06-01T00:00:00.000Z",
      elapsedTime: 0,
      parameters: {
        topics: [],
        companyids: [],
        start_date: "2021-06-01T00:00:00.000Z",
        end_date: "2026-06-01T00:00:00.000Z",
        limit: 2,
        page: 1,
      },
      warnings: [
        "Start time not specified.",
        "End time not specified.",
        "Topics not specified.",
        "Company Ids not specified.",
      ],
      companies: [],
      data: [
        telstraArticleView(expect.any(Number), [
          company("TLS", "Telstra Group", "Telstra", "https://www.telstra.com.au"),
        ]),
        expect.objectContaining({ title: "Westpac mining loans under scrutiny" }),
      ],
    });
    // The original's field order too, so that the text of the answer is unchanged.
    const envelope = ["status", "version", "maintainer", "startTime", "endTime", "elapsedTime", "parameters"];
    expect(Object.keys(body)).toEqual([...envelope, "warnings", "companies", "data"]);
    expect(Object.keys(body.parameters)).toEqual(["topics", "companyids", "start_date", "end_date", "limit", "page"]);
    expect(Object.keys(body.data[0])).toEqual([
      ...["id", "title", "abstract", "url", "thumbnail", "source", "publishedAt", "fingerprint", "companies"],
      ...["createdAt", "updatedAt"],
    ]);
  });

  it("defaults the limit to 50 and says so", async () => {
    const { body, titles } = await search("?topics=wrap&companyids=&start_date=2025-01-01&end_date=2026-05-01");
    expect(body.parameters.limit).toBe(50);
    expect(body.warnings).toEqual(["Limit not set, defaulting to limit to 50 articles.", "Company Ids not specified."]);
    expect(titles).toHaveLength(30);
  });

  it("matches any of the topics by full text", async () => {
    const { body, titles } = await search("?topics=mining,lithium&limit=10");
    expect(titles).toEqual([
      "Westpac mining loans under scrutiny",
      "Lithium price slump hits Pilbara Minerals",
      "BHP and Rio Tinto ramp up iron ore exports",
    ]);
    expect(body.parameters.topics).toEqual(["mining", "lithium"]);
    expect(body.warnings).not.toContain("Topics not specified.");
  });

  it("matches any of the company tickers and names the companies", async () => {
    const { body, titles } = await search("?companyids=BHP,cba&limit=10");
    expect(titles).toEqual([
      "Commonwealth Bank posts a record half-year profit",
      "BHP and Rio Tinto ramp up iron ore exports",
    ]);
    expect(body.companies).toEqual([BHP, CBA]);
    expect(body.data[1].companies).toEqual([BHP, RIO]);
    expect(body.parameters.companyids).toEqual(["BHP", "CBA"]);
    expect(body.warnings).toContain("Topics not specified.");
  });

  it("needs both a topic and a company when both are given", async () => {
    expect((await search("?topics=mining&companyids=WBC,QAN&limit=10")).titles).toEqual([
      "Westpac mining loans under scrutiny",
    ]);
  });

  it("honours start_date and end_date (a bare end date includes its day)", async () => {
    const { body, titles } = await search("?start_date=2026-01-10&end_date=2026-02-05&limit=10");
    expect(titles).toEqual(["Lithium price slump hits Pilbara Minerals", "BHP and Rio Tinto ramp up iron ore exports"]);
    expect(body.parameters).toMatchObject({
      start_date: "2026-01-10T00:00:00.000Z",
      end_date: "2026-02-05T23:59:59.999Z",
    });
    expect(body.warnings).not.toContain("Start time not specified.");
  });

  it("answers no articles and a warning when the end date is before the start date", async () => {
    const { status, total, body } = await search("?start_date=2026-03-01&end_date=2026-01-01&limit=10");
    expect(status).toBe(200);
    expect(total).toBe("0");
    expect(body.data).toEqual([]);
    expect(body.warnings).toEqual([
      "End date cannot be before start date.",
      "Topics not specified.",
      "Company Ids not specified.",
    ]);
  });

  it("warns of a reversed window in the original's place: after the limit, before topics and company ids", async () => {
    // The default start (five years back) is after this end.
    const defaults = await search("?end_date=2001-01-01");
    expect(defaults.body.warnings).toEqual([
      "Start time not specified.",
      "Limit not set, defaulting to limit to 50 articles.",
      "End date cannot be before start date.",
      "Topics not specified.",
      "Company Ids not specified.",
    ]);
    const named = await search("?start_date=2026-03-01&end_date=2026-01-01&topics=mining&companyids=ZZZ");
    expect(named.body.warnings).toEqual([
      "Limit not set, defaulting to limit to 50 articles.",
      "End date cannot be before start date.",
      "Company id ZZZ not found.",
    ]);
  });

  it("pages with limit and page", async () => {
    const first = await search("?topics=wrap&limit=4&page=1");
    const third = await search("?topics=wrap&limit=4&page=3");
    expect(first.total).toBe("30");
    expect(first.titles).toEqual([
      "Market wrap for day 30",
      "Market wrap for day 29",
      "Market wrap for day 28",
      "Market wrap for day 27",
    ]);
    expect(third.titles).toEqual([
      "Market wrap for day 22",
      "Market wrap for day 21",
      "Market wrap for day 20",
      "Market wrap for day 19",
    ]);
  });

  it("reads a company's Reuters code on the ASX (BHP.AX), as the original's clients send it, as its ticker", async () => {
    const { body, titles } = await search("?companyids=bhp.ax,CBA&limit=10");
    expect(body.parameters.companyids).toEqual(["BHP", "CBA"]);
    expect(body.companies).toEqual([BHP, CBA]);
    expect(titles).toEqual([
      "Commonwealth Bank posts a record half-year profit",
      "BHP and Rio Tinto ramp up iron ore exports",
    ]);
    const other = await getJson("/search?companyids=BHP.L", token);
    expect(other.status).toBe(400);
    expect(await other.json()).toEqual({
      valid: false,
      name: "match",
      param: "companyids.0",
      value: "BHP.L",
      match: "/^[A-Z0-9]{1,6}(\\.AX)?$/",
      message: "companyids.0 must match regular expression /^[A-Z0-9]{1,6}(\\.AX)?$/",
    });
  });

  it("warns about unknown tickers, and matches nothing when none is known", async () => {
    const unknown = await search("?companyids=ZZZ&limit=10");
    expect(unknown.body.warnings).toContain("Company id ZZZ not found.");
    expect(unknown.body.companies).toEqual([]);
    expect(unknown.titles).toEqual([]);
    const mixed = await search("?companyids=BHP,ZZZ&limit=10");
    expect(mixed.body.warnings).toContain("Company id ZZZ not found.");
    expect(mixed.titles).toEqual(["BHP and Rio Tinto ramp up iron ore exports"]);
  });

  it("answers 400 with the validation object for bad parameters", async () => {
    const badDate = await getJson("/search?start_date=last-week", token);
    expect(badDate.status).toBe(400);
    expect(await badDate.json()).toMatchObject({ valid: false, name: "type", param: "start_date", value: "last-week" });
    const bigLimit = await getJson("/search?limit=501", token);
    expect(bigLimit.status).toBe(400);
    expect(await bigLimit.json()).toMatchObject({ valid: false, name: "max", param: "limit", max: 500 });
  });
});
