#!/usr/bin/env node
// `npm run bench:news`: latency of GET /news?q=... (full-text search) over 100 000 stored articles, against the
// same FTS5 SQL run straight on D1 in the same run.
//   1. builds a local D1 state: the migrations, then 100 000 generated articles (and their company links) applied
//      with `wrangler d1 execute --file` in batches;
//   2. starts `wrangler dev` for the Worker and for bench/news-floor (a bare Worker running the very statements
//      GET /news runs, built by the app's query builder) on the same --persist-to state;
//   3. signs a user up through the API and times sequential requests (c=1), alternating API and floor per query.
// Prints p50 and p99 in milliseconds per side and the ratio API / floor, and beside them each side's D1 work per
// 1,000 timed requests from the Server-Timing header (the API runs with D1_USAGE_HEADER on, the floor always answers
// it; bench/d1-usage.mjs).
// Env: BENCH_NEWS_ARTICLES (default 100000) sets how many articles are seeded, BENCH_NEWS_ROUNDS (default 1000) how
// many timed requests each side gets.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { root, stopAll, stopAllOnSignals, tempDir } from "../test/support/processes.mjs";
import { startWranglerDev, wranglerSync } from "../test/support/wrangler-dev.mjs";
import { D1_FOOTNOTE, D1Tally, d1Header, d1Line, d1UsageOf } from "./d1-usage.mjs";
import { percentile } from "./samples.mjs";

stopAllOnSignals();

const floorConfig = path.join(root, "bench", "news-floor", "wrangler.toml");

const ARTICLES = Number(process.env.BENCH_NEWS_ARTICLES ?? 100_000);
const ROUNDS = Number(process.env.BENCH_NEWS_ROUNDS ?? 1000);
const WARMUP = 50;
const MASTER_KEY = "bench-master-key";
const JWT_SECRET = "bench-jwt-secret-0123456789abcdef0123";

/** The searches timed, from selective to broad: each round runs one of them on both sides. */
const QUERIES = [
  "lithium",
  "iron ore",
  "westpac dividend",
  "copper OR gold",
  '"interest rates"',
  "outage",
  "profit",
  "expans*",
];

// ------------------------------------------------------------------------------------------------------------
// Generated articles: titles and abstracts from templates, so that terms have realistic, uneven frequencies.

const COMPANIES = [
  ["BHP", "BHP"],
  ["RIO", "Rio Tinto"],
  ["FMG", "Fortescue"],
  ["CBA", "Commonwealth Bank"],
  ["WBC", "Westpac"],
  ["NAB", "NAB"],
  ["ANZ", "ANZ"],
  ["CSL", "CSL"],
  ["WES", "Wesfarmers"],
  ["WOW", "Woolworths"],
  ["TLS", "Telstra"],
  ["WDS", "Woodside"],
  ["STO", "Santos Ltd"],
  ["QAN", "Qantas"],
  ["PLS", "Pilbara Minerals"],
  ["MIN", "MinRes"],
  ["XRO", "Xero"],
  ["COL", "Coles"],
  ["MQG", "Macquarie Bank"],
  ["TCL", "Transurban"],
];
const COMMODITIES = [
  "iron ore",
  "lithium",
  "copper",
  "gold",
  "coal",
  "LNG",
  "nickel",
  "uranium",
  "wheat",
  "rare earths",
];
const VERBS = ["lifts", "cuts", "beats", "misses", "flags", "confirms", "delays", "doubles", "reviews", "defends"];
const OBJECTS = [
  "profit guidance",
  "dividend",
  "expansion plans",
  "job cuts",
  "capital raising",
  "outage compensation",
  "interest rates outlook",
  "production forecast",
  "takeover bid",
  "climate targets",
  "executive pay",
  "buyback",
];
const SENTENCES = [
  "Shares closed {dir} {pct}% on the ASX after the announcement.",
  "Analysts said {commodity} prices would decide the second half.",
  "The company blamed weaker {commodity} demand from China.",
  "Investors welcomed the update, which came earlier than expected.",
  "The regulator said it would look closely at the decision.",
  "Interest rates and household spending weighed on the outlook.",
  "Management expects conditions to improve by the end of the financial year.",
  "Unions criticised the plan, saying regional jobs were at risk.",
  "The board will meet again in {month} to review the strategy.",
  "Brokers raised their price targets after the briefing.",
];
const MONTHS = ["January", "March", "May", "July", "September", "November"];
const SOURCES = [
  ["guardian", 30],
  ["nyt", 10],
  ["abc.net.au", 25],
  ["afr.com", 20],
  ["smh.com.au", 15],
];

function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const sqlString = (text) => `'${String(text).replaceAll("'", "''")}'`;

function* generateArticles(count) {
  const rand = random(20261122);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const weighted = (list) => {
    const total = list.reduce((sum, [, weight]) => sum + weight, 0);
    let roll = rand() * total;
    for (const [value, weight] of list) if ((roll -= weight) < 0) return value;
    return list[0][0];
  };
  const seen = new Set();
  const end = Date.UTC(2026, 10, 1);
  const span = 2 * 365 * 86_400_000;
  for (let id = 1; id <= count; id++) {
    let title, source, fingerprint;
    do {
      const [ticker, name] = pick(COMPANIES);
      title =
        rand() < 0.6
          ? `${name} ${pick(VERBS)} ${pick(OBJECTS)} as ${pick(COMMODITIES)} ${rand() < 0.5 ? "rallies" : "slides"}`
          : `${name} ${pick(VERBS)} ${pick(OBJECTS)}: ${Math.floor(rand() * 900 + 100)} staff, $${(rand() * 9 + 1).toFixed(1)}bn`;
      source = weighted(SOURCES);
      fingerprint = createHash("md5")
        .update(title + source)
        .digest("hex");
      if (!seen.has(fingerprint)) {
        seen.add(fingerprint);
        const sentences = Array.from({ length: 2 + Math.floor(rand() * 2) }, () =>
          pick(SENTENCES)
            .replace("{dir}", rand() < 0.5 ? "up" : "down")
            .replace("{pct}", (rand() * 8).toFixed(1))
            .replace("{commodity}", pick(COMMODITIES))
            .replace("{month}", pick(MONTHS)),
        );
        const publishedAt = Math.floor(end - rand() * span);
        const tickers = [ticker, ...(rand() < 0.2 ? [pick(COMPANIES)[0]] : [])];
        yield {
          id,
          fingerprint,
          title,
          abstract: sentences.join(" "),
          source,
          publishedAt,
          tickers: [...new Set(tickers)],
        };
        break;
      }
    } while (true);
  }
}

/** Writes the seed as SQL files of about 10 000 articles each (multi-row INSERTs of 200 rows: D1 refuses statements over 100 kB). */
function writeSeedFiles(dir, count) {
  const files = [];
  let rows = [];
  let links = [];
  let statements = [];
  const flushStatements = () => {
    if (rows.length)
      statements.push(
        `INSERT INTO articles (id, fingerprint, title, abstract, url, thumbnail, source, published_at, created_at, updated_at) VALUES\n${rows.join(",\n")};`,
      );
    if (links.length)
      statements.push(`INSERT INTO article_companies (article_id, ticker, origin) VALUES\n${links.join(",\n")};`);
    rows = [];
    links = [];
  };
  const flushFile = () => {
    flushStatements();
    if (!statements.length) return;
    const file = path.join(dir, `seed-${files.length}.sql`);
    writeFileSync(file, statements.join("\n"));
    files.push(file);
    statements = [];
  };
  const now = Date.UTC(2026, 10, 1);
  for (const article of generateArticles(count)) {
    const url = `https://${article.source === "guardian" ? "www.theguardian.com" : article.source === "nyt" ? "www.nytimes.com" : article.source}/${article.id}`;
    rows.push(
      `(${article.id}, ${sqlString(article.fingerprint)}, ${sqlString(article.title)}, ${sqlString(article.abstract)}, ${sqlString(url)}, NULL, ${sqlString(article.source)}, ${article.publishedAt}, ${now}, ${now})`,
    );
    for (const ticker of article.tickers) links.push(`(${article.id}, ${sqlString(ticker)}, 'text')`);
    if (rows.length === 200) flushStatements();
    if (article.id % 10_000 === 0) flushFile();
  }
  flushFile();
  return files;
}

// ------------------------------------------------------------------------------------------------------------
// Measurement

async function timedGet(url, headers) {
  const start = performance.now();
  const response = await fetch(url, { headers });
  const body = await response.text();
  const ms = performance.now() - start;
  if (!response.ok) throw new Error(`GET ${url} answered ${response.status}: ${body.slice(0, 300)}`);
  const total = Number(response.headers.get("X-Total-Count"));
  return { ms, total, rows: JSON.parse(body).length, usage: d1UsageOf(response) };
}

const fmt = (ms) => ms.toFixed(2).padStart(8);

/** Applies the migrations to a fresh local D1 and loads the generated articles into it. */
function seedDatabase(persistTo, seedDir) {
  console.log(`bench:news: applying migrations and seeding ${ARTICLES} articles ...`);
  wranglerSync(["d1", "migrations", "apply", "DB", "--local", "--persist-to", persistTo], "migrations");
  const files = writeSeedFiles(seedDir, ARTICLES);
  for (const file of files)
    wranglerSync(
      ["d1", "execute", "DB", "--local", "--persist-to", persistTo, "--file", file],
      `seeding ${path.basename(file)}`,
    );
}

async function main() {
  const persistTo = tempDir("bench-news-").dir;
  const seedDir = tempDir("bench-news-seed-").dir;

  const seedStart = performance.now();
  seedDatabase(persistTo, seedDir);
  console.log(
    `bench:news: seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s; starting wrangler dev for the API and the floor ...`,
  );

  // Both servers share the seeded state: the migrations are already applied to it.
  // D1_USAGE_HEADER: each answer carries its D1 work (Server-Timing), which the report sums.
  const api = await startWranglerDev(
    { MASTER_KEY, JWT_SECRET, D1_USAGE_HEADER: "true" },
    { name: "news-api", persistTo, migrate: false, readyPath: "/", inheritStderr: true },
  );
  const signUp = await fetch(`${api.url}/users`, {
    method: "POST",
    headers: { "content-type": "application/json", Authorization: `Bearer ${MASTER_KEY}` },
    body: JSON.stringify({ email: "bench@example.com", password: "bench-password" }),
  });
  if (signUp.status !== 201) throw new Error(`POST /users answered ${signUp.status}: ${await signUp.text()}`);
  const { token } = await signUp.json();
  const auth = { Authorization: `Bearer ${token}` };

  const floor = await startWranglerDev(
    {},
    { name: "news-floor", configPath: floorConfig, persistTo, migrate: false, readyPath: "/ping", inheritStderr: true },
  );

  // Both sides must find the same thing, or the comparison means nothing.
  const counts = [];
  for (const q of QUERIES) {
    const [a, f] = [
      await timedGet(`${api.url}/news?q=${encodeURIComponent(q)}`, auth),
      await timedGet(`${floor.url}/?q=${encodeURIComponent(q)}`),
    ];
    if (a.total !== f.total || a.rows !== f.rows)
      throw new Error(`q=${q}: the API found ${a.total} (${a.rows} rows), the floor ${f.total} (${f.rows} rows)`);
    counts.push(`${q} ${a.total}`);
  }

  const samples = { api: [], floor: [], d1: { api: new D1Tally(), floor: new D1Tally() } };
  const perQuery = new Map(QUERIES.map((q) => [q, { api: [], floor: [] }]));
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const q = QUERIES[round % QUERIES.length];
    const encoded = encodeURIComponent(q);
    // Alternate which side goes first, so that neither always meets a warmer cache.
    const order = round % 2 ? ["floor", "api"] : ["api", "floor"];
    for (const side of order) {
      const { ms, usage } =
        side === "api"
          ? await timedGet(`${api.url}/news?q=${encoded}`, auth)
          : await timedGet(`${floor.url}/?q=${encoded}`);
      if (round >= WARMUP) {
        samples[side].push(ms);
        samples.d1[side].add(usage);
        perQuery.get(q)[side].push(ms);
      }
    }
  }

  report(samples, perQuery, counts);
}

function report(samples, perQuery, counts) {
  console.log("");
  console.log(
    `bench:news (${ARTICLES} articles; ${ROUNDS} requests per side after ${WARMUP} warm-ups; sequential, c=1; wall time per request, ms)`,
  );
  console.log(`matches per query: ${counts.join(", ")}`);
  console.log("                                     p50      p99");
  console.log(
    `GET /news?q=... (API)           ${fmt(percentile(samples.api, 50))} ${fmt(percentile(samples.api, 99))}`,
  );
  console.log(
    `same FTS SQL on D1 (floor)      ${fmt(percentile(samples.floor, 50))} ${fmt(percentile(samples.floor, 99))}`,
  );
  console.log(
    `ratio API / floor               ${(percentile(samples.api, 50) / percentile(samples.floor, 50)).toFixed(2).padStart(7)}x ${(percentile(samples.api, 99) / percentile(samples.floor, 99)).toFixed(2).padStart(7)}x`,
  );
  console.log("");
  console.log(d1Header(32));
  console.log(d1Line("GET /news?q=... (API)", samples.d1.api, 32));
  console.log(d1Line("same FTS SQL on D1 (floor)", samples.d1.floor, 32));
  console.log(D1_FOOTNOTE);
  console.log("");
  console.log("per query                        API p50  floor p50");
  for (const [q, side] of perQuery)
    console.log(`  ${q.padEnd(28)} ${fmt(percentile(side.api, 50))} ${fmt(percentile(side.floor, 50))}`);
}

try {
  await main();
  await stopAll();
} catch (error) {
  console.error(`bench:news failed: ${error instanceof Error ? error.message : error}`);
  await stopAll();
  process.exit(1);
}
