// zod schemas of the news API's requests (field order is the order the generator reports failures in), and of its
// answers for the OpenAPI document.
import { json } from "../../shared/http/openapi";
import { oneLine } from "../../shared/settings";
import { z } from "../../shared/zod";
import { integerParam } from "../../shared/zod-params";
import { ARTICLE_SORT_FIELDS } from "../store/articles";
import {
  MAX_SEARCH_WORDS,
  MIN_PREFIX_LENGTH,
  queryRefusal,
  topicsRefusal,
  type SearchRefusal,
} from "../store/full-text";
import { htmlToText, MAX_TITLE_LENGTH } from "../store/text";
import { USER_SORT_FIELDS } from "../store/users";
import { commaList, companyId, httpUrlField, isoDate, isoDateEnd, ticker } from "./validation";

export const EMAIL_PATTERN = /^\S+@\S+\.\S+$/;

/**
 * Trimmed and lower-cased before it is validated, as the generator's schema does. The length check stops the rest:
 * the pattern backtracks in cubic time on text such as "@.@.@." with a space in it, and a login's e-mail comes
 * unauthenticated in a header of any length.
 */
const email = z.preprocess(
  (value) => (typeof value === "string" ? value.trim().toLowerCase() : value),
  z.string().max(254, { abort: true }).regex(EMAIL_PATTERN),
);
const password = z.string().min(6).max(1024);
const name = z.string().trim().min(1).max(128);
const picture = httpUrlField();

/**
 * What a login reads from HTTP Basic: the e-mail address is validated (400), the password is not. A wrong password of
 * any length is only a wrong password (401, the same answer as any other), never a length rule that would tell it apart.
 */
export const Credentials = z.object({ email, password: z.string() });

export const CreateUser = z.object({
  email,
  password,
  name: name.optional(),
  picture: picture.optional(),
  role: z.enum(["user", "admin"]).optional(),
});

export const UpdateUser = z.object({ name: name.optional(), picture: picture.optional() });

export const UpdatePassword = z.object({ password });

/**
 * The most terms `sort` takes: one per sortable field and direction. A field named again only changes its direction
 * (querymen's rule, parseSort), so more terms could never change the order; D1 refuses an ORDER BY of 100 terms.
 */
export const maxSortTerms = (fields: readonly string[]) => 2 * fields.length;

const sortParam = (defaultSort: string, fields: readonly string[]) =>
  commaList(z.string(), maxSortTerms(fields))
    .default([defaultSort])
    .openapi({
      param: {
        description: oneLine`Comma list of at most ${maxSortTerms(fields)} terms (one per field and direction; 400
          \`maxlength\` beyond), each one of ${fields.join(", ")}, with \`-\` for descending. A field named again keeps
          its first place and takes the last direction given.`,
      },
    });

/** querymen's list parameters: page from 1, limit 1 to `maxLimit`, comma-separated sort and fields. */
const listQuery = (defaultSort: string, sortFields: readonly string[], defaultLimit = 30, maxLimit = 100) => ({
  q: z.string().trim().max(500).optional(),
  page: integerParam(1, 100_000).default(1),
  limit: integerParam(1, maxLimit).default(defaultLimit),
  sort: sortParam(defaultSort, sortFields),
  fields: commaList().optional(),
});

export const ListUsersQuery = z.object(listQuery("-createdAt", Object.keys(USER_SORT_FIELDS)));

const REFUSAL_MESSAGES: Record<SearchRefusal["rule"], string> = {
  maxwords: `must have at most ${MAX_SEARCH_WORDS} words (each distinct term's words, once)`,
  minprefix: `must have at least ${MIN_PREFIX_LENGTH} characters before each *`,
};

/** A full-text search's bound as a validation failure {name: <rule>, <rule>: <limit>} (full-text.ts says why). */
const searchBound =
  <T>(refusal: (value: T) => SearchRefusal | undefined) =>
  (value: T, ctx: z.core.$RefinementCtx<T>) => {
    const refused = refusal(value);
    if (refused)
      ctx.addIssue({
        code: "custom",
        message: REFUSAL_MESSAGES[refused.rule],
        params: { name: refused.rule, [refused.rule]: refused.limit },
      });
  };

const newsQ = z
  .string()
  .trim()
  .max(500, { abort: true })
  .superRefine(searchBound(queryRefusal))
  .optional()
  .openapi({
    param: {
      description: oneLine`Full text: every word, "phrases", prefix* (at least ${MIN_PREFIX_LENGTH} characters before the
        *, 400 \`minprefix\` otherwise), a OR b. At most ${MAX_SEARCH_WORDS} words over its distinct terms (a term
        written again counts once; 400 \`maxwords\` beyond).`,
    },
  });

/** restfulnews raised querymen's largest page to 500 articles for /news; users keep the generator's 100. */
export const ListNewsQuery = z.object({
  ...listQuery("-publishedAt", Object.keys(ARTICLE_SORT_FIELDS), 30, 500),
  q: newsQ,
  companies: commaList(ticker).optional(),
  sources: commaList(z.string().trim().toLowerCase().max(100)).optional(),
  from: isoDate.optional(),
  to: isoDateEnd.optional(),
});

export const SearchQuery = z.object({
  topics: commaList(z.string().trim().max(200))
    .superRefine(searchBound(topicsRefusal))
    .optional()
    .openapi({
      param: {
        description: oneLine`Comma list of phrases, any of which an article matches. At most ${MAX_SEARCH_WORDS} words
          over the distinct topics (a topic written again counts once; 400 \`maxwords\` beyond).`,
      },
    }),
  companyids: commaList(companyId).optional(),
  start_date: isoDate.optional(),
  end_date: isoDateEnd.optional(),
  limit: integerParam(1, 500).optional(),
  page: integerParam(1, 100_000).default(1),
});

const articleFields = {
  // Stored as plain text (htmlToText): a title of tags alone would be stored empty.
  title: z
    .string()
    .trim()
    .min(1)
    .max(MAX_TITLE_LENGTH, { abort: true })
    .refine((title) => htmlToText(title) !== "", {
      message: "must hold text, not only HTML tags",
      params: { name: "required" },
    }),
  url: httpUrlField(),
  abstract: z.string().max(100_000).optional(),
  thumbnail: httpUrlField().nullable().optional(),
  source: z.string().trim().toLowerCase().min(1).max(100),
  publishedAt: isoDate.optional(),
  /** Tickers to link besides those the matcher finds in the title and abstract. */
  companies: commaList(ticker).optional(),
};

export const CreateArticle = z.object(articleFields);

export const UpdateArticle = z.object({
  title: articleFields.title.optional(),
  url: articleFields.url.optional(),
  abstract: articleFields.abstract,
  thumbnail: articleFields.thumbnail,
  source: articleFields.source.optional(),
  publishedAt: articleFields.publishedAt,
  companies: articleFields.companies,
});

const USER_ID_DESCRIPTION =
  "the user's id: `user.id` in the answer of POST /users or POST /auth. An id longer than 64 characters " +
  "names no user: 404, as an unknown one does.";

/** A user's id is made at sign-up: no example can name it, the description says where it is. */
export const IdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({
      param: { description: USER_ID_DESCRIPTION },
    }),
});

/** The id of a user one changes: `me` names the caller, as in the original (the generator's `params.id === 'me'`). */
export const ChangedUserIdParam = z.object({
  id: IdParam.shape.id.openapi({
    param: { description: `${USER_ID_DESCRIPTION} \`me\` names the caller.`, example: "me" },
  }),
});

/** The first article stored: the one the example of POST /news adds to an installation with no articles yet. */
const ARTICLE_ID_EXAMPLE = "1";

/** An article's id in a path: a positive integer (anything else names no article: 404). */
export const ArticleIdParam = z.object({
  id: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/)
    .openapi({ example: ARTICLE_ID_EXAMPLE, param: { example: ARTICLE_ID_EXAMPLE } }),
});

/** GET /news/jobs: a page of runs, newest first (page from 1, limit 1 to 100). */
export const ListJobRunsQuery = z.object({
  page: integerParam(1, 100_000).default(1),
  limit: integerParam(1, 100).default(30),
});

// ---------------------------------------------------------------------------------------------------------------
// Answers, for the OpenAPI document only: the views are built by the store, not parsed.

export const PublicUserView = z.object({ id: z.string(), name: z.string(), picture: z.string() });

export const FullUserView = PublicUserView.extend({
  role: z.enum(["user", "admin"]),
  email: z.string(),
  createdAt: z.string(),
});

export const Session = z.object({ token: z.string(), user: FullUserView });

export const ArticleView = z.object({
  id: z.number().int(),
  title: z.string(),
  abstract: z.string(),
  url: z.string(),
  thumbnail: z.string().nullable(),
  source: z.string(),
  publishedAt: z.string(),
  fingerprint: z.string(),
  companies: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const NewsJobRunView = z.object({
  id: z.number().int(),
  kind: z.string().openapi({ description: "`news-ingest`: one run per publisher and cron tick" }),
  state: z.enum(["queued", "running", "succeeded", "failed"]),
  trigger: z.string().openapi({ description: "the cron expression that queued it" }),
  attempts: z.number().int(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  warnings: z.array(z.string()).openapi({
    description: "`INFO: <publisher>: <n> fetched, <n> new, <n> updated, <n> unchanged`, skips and warnings",
  }),
  error: z.string().nullable().openapi({ description: "why the last attempt failed (it is retried while queued)" }),
});

const CompanyView = z.object({
  ticker: z.string(),
  name: z.string(),
  shortName: z.string(),
  websiteUrl: z.string().nullable(),
});

/** The /search envelope; routes/search.ts builds it typed by this schema (z.infer), so the two cannot drift. */
export const SearchResponse = z.object({
  status: z.literal(200),
  version: z.string(),
  maintainer: z.string().openapi({ description: "the original's maintainer, kept for its clients" }),
  startTime: z.string(),
  endTime: z.string(),
  elapsedTime: z.number(),
  parameters: z.object({
    topics: z.array(z.string()),
    companyids: z.array(z.string()),
    start_date: z.string(),
    end_date: z.string(),
    limit: z.number().int(),
    page: z.number().int(),
  }),
  warnings: z.array(z.string()),
  companies: z.array(CompanyView),
  data: z.array(ArticleView.extend({ companies: z.array(CompanyView) })),
});

/**
 * Every error the news API answers (errors.ts): the generator's validation object, with the failed rule's limit under
 * the rule's name.
 */
const NewsFailure = z
  .object({
    valid: z.literal(false),
    name: z.string(),
    param: z.string(),
    value: z.unknown().optional(),
    message: z.string(),
  })
  .catchall(z.unknown())
  .openapi("NewsFailure");

export { json };

/** A JSON list answer with its total in X-Total-Count. */
export const jsonList = (schema: z.ZodType, description: string) => ({
  ...json(schema, description),
  headers: {
    "X-Total-Count": { description: "how many items match, over every page", schema: { type: "integer" as const } },
  },
});

/** A request body: JSON, or form fields (curl -d), read within NEWS_MAX_BODY_BYTES; the example Swagger UI pre-fills. */
export const formOrJson = <S extends z.ZodType>(schema: S, example?: z.input<S>) => {
  const media = { schema, ...(example !== undefined && { example }) };
  return {
    required: true,
    content: { "application/json": media, "application/x-www-form-urlencoded": media, "multipart/form-data": media },
  };
};

const challenge = {
  "WWW-Authenticate": {
    description: 'the scheme the route asks for: Bearer realm="Users" or Basic realm="Users"',
    schema: { type: "string" as const },
  },
};

const FAILURES = {
  400: json(NewsFailure, "a field fails validation, or the body is not UTF-8, valid JSON or a valid form"),
  401: {
    ...json(NewsFailure, "missing or wrong credentials, or a role that does not suffice"),
    headers: challenge,
  },
  404: json(NewsFailure, "no such record"),
  409: json(NewsFailure, "the record would duplicate one already stored"),
  413: json(NewsFailure, "the body is larger than NEWS_MAX_BODY_BYTES"),
  500: json(NewsFailure, "an unexpected failure (name `server`), or settings that do not parse"),
};

/** The failure answers a route can give, by status, and the 500 any route can give. */
export const failures = (...codes: Exclude<keyof typeof FAILURES, 500>[]) =>
  Object.fromEntries([...codes, 500 as const].map((code) => [code, FAILURES[code]]));
