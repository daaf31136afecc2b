// The bounds on the news API's list parameters: `sort` takes one term per sortable field and direction (a field named
// again keeps its first place and takes the last direction, as querymen did), and every comma list holds at most
// MAX_LIST_ITEMS items, so no query string makes an ORDER BY, a json_each list or an FTS5 query of the caller's size.
// `page` and `limit` are refused naming their own bounds, however large the number.
import { beforeAll, describe, expect, it } from "vitest";
import { callJson } from "../../support/worker-http";
import { seedArticles } from "../../support/news-articles";
import { bearer, getJson, signUp } from "../../support/news-api";

let reader: string;
let admin: string;

beforeAll(async () => {
  await seedArticles();
  reader = (await signUp("limits-reader@example.com")).token;
  admin = (await signUp("limits-admin@example.com", { role: "admin" })).token;
});

const ARTICLE_FIELDS = ["publishedAt", "createdAt", "updatedAt", "title", "source", "id"];
const USER_FIELDS = ["createdAt", "updatedAt", "name", "email", "role"];

const tooLong = (param: string, value: unknown, maxlength: number) => ({
  valid: false,
  name: "maxlength",
  param,
  value,
  maxlength,
  message: `${param} must have length lower than or equal to ${maxlength}`,
});

async function get(path: string, token = reader) {
  const response = await getJson(path, token);
  const body = await response.json();
  const titles = Array.isArray(body) ? (body as { title: string }[]).map((article) => article.title) : [];
  return { status: response.status, body, titles };
}

/** `count` distinct items: T0, T1, ... */
const items = (count: number, prefix = "T") => Array.from({ length: count }, (_, index) => `${prefix}${index}`);

describe("GET /news?sort", () => {
  it("answers 400 naming the limit of 12 terms for the 100 terms that were a 500", async () => {
    const sort = Array(100).fill("title").join(",");
    expect(await get(`/news?sort=${sort}`)).toMatchObject({ status: 400, body: tooLong("sort", sort, 12) });
  });

  it("answers 400 for 13 terms, and takes 12: each field in both directions", async () => {
    const thirteen = [...ARTICLE_FIELDS, ...ARTICLE_FIELDS.map((field) => `-${field}`), "title"].join(",");
    expect(await get(`/news?sort=${thirteen}`)).toMatchObject({ status: 400, body: tooLong("sort", thirteen, 12) });
    const twelve = await get(`/news?limit=100&sort=${[...ARTICLE_FIELDS.map((f) => `-${f}`), ...ARTICLE_FIELDS]}`);
    const once = await get(`/news?limit=100&sort=${ARTICLE_FIELDS}`);
    expect(twelve.status).toBe(200);
    expect(twelve.titles).toHaveLength(36);
    expect(twelve.titles).toEqual(once.titles);
  });

  it("sorts on a field named twice once, in its first place and its last direction", async () => {
    const collapsed = await get("/news?limit=100&sort=source,-publishedAt,-source");
    const meant = await get("/news?limit=100&sort=-source,-publishedAt");
    expect(collapsed.status).toBe(200);
    // wire.example (30 market wraps, newest first) comes first; the sources ascending would start with abc.net.au.
    expect(collapsed.titles.slice(0, 2)).toEqual(["Market wrap for day 30", "Market wrap for day 29"]);
    expect(collapsed.titles.slice(-3)).toEqual([
      "BHP and Rio Tinto ramp up iron ore exports",
      "Westpac mining loans under scrutiny",
      "Telstra switches on its 5G network in the outback",
    ]);
    expect(collapsed.titles).toEqual(meant.titles);
  });

  it("counts the terms as written, blank ones left out", async () => {
    const sort = `${Array(12).fill("title").join(",")},,,`;
    expect(await get(`/news?sort=${sort}`)).toMatchObject({ status: 200 });
  });
});

describe("GET /users?sort", () => {
  it("takes 10 terms (5 fields, 2 directions) and answers 400 naming the limit beyond", async () => {
    const ten = [...USER_FIELDS, ...USER_FIELDS.map((field) => `-${field}`)].join(",");
    expect(await get(`/users?sort=${ten}`, admin)).toMatchObject({ status: 200 });
    const eleven = `${ten},email`;
    expect(await get(`/users?sort=${eleven}`, admin)).toMatchObject({
      status: 400,
      body: tooLong("sort", eleven, 10),
    });
  });
});

describe("comma lists hold at most 100 items", () => {
  const lists: [string, string, string][] = [
    ["/news", "companies", "T"],
    ["/news", "sources", "s"],
    ["/news", "fields", "f"],
    ["/users", "fields", "f"],
    ["/search", "topics", "w"],
    ["/search", "companyids", "T"],
  ];
  for (const [path, param, prefix] of lists) {
    it(`${path}?${param}: 100 items are read, 101 answer 400 naming the limit`, async () => {
      const token = path === "/users" ? admin : reader;
      // Topics are bounded by their distinct words too (16): 100 topics are read when they repeat.
      const hundred = param === "topics" ? items(100).map((_, index) => `w${index % 16}`) : items(100, prefix);
      expect(await get(`${path}?${param}=${hundred}`, token)).toMatchObject({ status: 200 });
      const written = items(101, prefix).join(",");
      expect(await get(`${path}?${param}=${written}`, token)).toMatchObject({
        status: 400,
        body: tooLong(param, written, 100),
      });
    });
  }

  it("POST /news refuses 101 companies in a JSON body, echoing the array, and stores nothing", async () => {
    const companies = items(101);
    const response = await callJson(
      "/news",
      "POST",
      { title: "Too many companies", url: "https://example.com/too-many", source: "limits", companies },
      bearer(admin),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(tooLong("companies", companies, 100));
    expect(await get("/news?sources=limits")).toMatchObject({ status: 200, titles: [] });
  });
});

describe("full-text searches hold at most 16 distinct words, and prefixes of 3 characters or more", () => {
  const refused = (param: string, value: string, name: string, limit: number, says: string) => ({
    status: 400,
    body: { valid: false, name, param, value, [name]: limit, message: `${param} ${says}` },
  });
  const tooManyWords = (param: string, value: string) =>
    refused(param, value, "maxwords", 16, "must have at most 16 words (each distinct term's words, once)");
  const shortPrefix = (value: string) =>
    refused("q", value, "minprefix", 3, "must have at least 3 characters before each *");
  const query = (param: string, value: string) => `?${param}=${encodeURIComponent(value)}`;

  it("GET /news?q: 16 words are searched, a 17th answers 400 maxwords, a term written again counts once", async () => {
    const sixteen = `mining ${items(15, "w").join(" ")}`;
    expect(await get(`/news${query("q", sixteen)}`)).toMatchObject({ status: 200, titles: [] });
    const seventeen = `${sixteen} w15`;
    const { status, body } = await get(`/news${query("q", seventeen)}`);
    expect({ status, body }).toEqual(tooManyWords("q", seventeen));
    // The review's repeated "a*" terms (166 made 5.5 s on 50 000 articles), at 3 characters: one term, read once.
    const repeated = Array(100).fill("min*").join(" ");
    expect(await get(`/news${query("q", repeated)}`)).toMatchObject({
      status: 200,
      titles: [
        "Westpac mining loans under scrutiny",
        "Lithium price slump hits Pilbara Minerals",
        "BHP and Rio Tinto ramp up iron ore exports",
      ],
    });
    const phrase = `"${Array(17).fill("the").join(" ")}"`;
    const tooLongPhrase = await get(`/news${query("q", phrase)}`);
    expect({ status: tooLongPhrase.status, body: tooLongPhrase.body }).toEqual(tooManyWords("q", phrase));
  });

  it("GET /news?q: a prefix of fewer than 3 characters answers 400 minprefix", async () => {
    for (const q of ["a*", "lithium mi*", "bhp OR é*", "ab* ab* lithium"]) {
      const { status, body } = await get(`/news${query("q", q)}`);
      expect({ status, body }).toEqual(shortPrefix(q));
    }
    expect(await get(`/news${query("q", "lit*")}`)).toMatchObject({
      status: 200,
      titles: ["Lithium price slump hits Pilbara Minerals"],
    });
  });

  it("GET /search?topics: 16 words over the distinct topics are searched, a 17th answers 400 maxwords", async () => {
    const sixteen = ["iron ore", "Iron Ore", ...items(14, "w"), "w0"].join(",");
    expect(await get(`/search${query("topics", sixteen)}`)).toMatchObject({ status: 200 });
    const seventeen = `${sixteen},w14`;
    const { status, body } = await get(`/search${query("topics", seventeen)}`);
    expect({ status, body }).toEqual(tooManyWords("topics", seventeen));
    // The review's 60 topics of 21 to 40 repeats of "the" (18 s on 50 000 articles).
    const repeats = Array.from({ length: 60 }, (_, index) =>
      Array(21 + (index % 20))
        .fill("the")
        .join(" "),
    ).join(",");
    const attack = await get(`/search${query("topics", repeats)}`);
    expect({ status: attack.status, body: attack.body }).toEqual(tooManyWords("topics", repeats));
  });
});

describe("page and limit past JavaScript's safe integers", () => {
  const HUGE = "99999999999999999999";
  const outOfRange = (param: string, value: number, bound: { max: number } | { min: number }) => {
    const [name, limit] = Object.entries(bound)[0];
    const words = name === "max" ? "lower than or equal to" : "greater than or equal to";
    return { valid: false, name, param, value, [name]: limit, message: `${param} must be ${words} ${limit}` };
  };

  for (const [path, token, maxLimit] of [
    ["/news", () => reader, 500],
    ["/users", () => admin, 100],
    ["/search", () => reader, 500],
    ["/news/jobs", () => admin, 100],
  ] as const) {
    it(`${path}: answers 400 naming the documented bound, exactly as for the first value past it`, async () => {
      const refusal = async (query: string) => {
        const { status, body } = await get(`${path}?${query}`, token());
        return { status, body };
      };
      const pastPage = await refusal("page=100001");
      expect(pastPage).toEqual({ status: 400, body: outOfRange("page", 100001, { max: 100_000 }) });
      const hugePage = await refusal(`page=${HUGE}`);
      expect(hugePage).toEqual({ status: 400, body: outOfRange("page", Number(HUGE), { max: 100_000 }) });
      expect((hugePage.body as { message: string }).message).toBe((pastPage.body as { message: string }).message);
      expect(await refusal(`page=-${HUGE}`)).toEqual({
        status: 400,
        body: outOfRange("page", -Number(HUGE), { min: 1 }),
      });
      expect(await refusal(`limit=${HUGE}`)).toEqual({
        status: 400,
        body: outOfRange("limit", Number(HUGE), { max: maxLimit }),
      });
    });
  }
});
