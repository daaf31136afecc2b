// zod schemas of the news API's requests. Field order is the order the generator reports failures in.
import { z } from "zod";
import { commaList, httpUrlField, integerParam, isoDate, isoDateEnd, ticker } from "./validation";

export const EMAIL_PATTERN = /^\S+@\S+\.\S+$/;

/** Trimmed and lower-cased before it is validated, as the generator's schema does. */
const email = z.preprocess(
  (value) => (typeof value === "string" ? value.trim().toLowerCase() : value),
  z.string().max(254).regex(EMAIL_PATTERN),
);
const password = z.string().min(6).max(1024);
const name = z.string().trim().min(1).max(128);
const picture = httpUrlField();

export const Credentials = z.object({ email, password });

export const CreateUser = z.object({
  email,
  password,
  name: name.optional(),
  picture: picture.optional(),
  role: z.enum(["user", "admin"]).optional(),
});

export const UpdateUser = z.object({ name: name.optional(), picture: picture.optional() });

export const UpdatePassword = z.object({ password });

/** querymen's list parameters: page from 1, limit 1 to `maxLimit`, comma-separated sort and fields. */
const listQuery = (defaultSort: string, defaultLimit = 30, maxLimit = 100) => ({
  q: z.string().trim().max(500).optional(),
  page: integerParam().min(1).max(100_000).default(1),
  limit: integerParam().min(1).max(maxLimit).default(defaultLimit),
  sort: commaList().default([defaultSort]),
  fields: commaList().optional(),
});

export const ListUsersQuery = z.object(listQuery("-createdAt"));

export const ListNewsQuery = z.object({
  ...listQuery("-publishedAt"),
  companies: commaList(ticker).optional(),
  sources: commaList(z.string().trim().toLowerCase().max(100)).optional(),
  from: isoDate.optional(),
  to: isoDateEnd.optional(),
});

export const SearchQuery = z.object({
  topics: commaList(z.string().trim().max(200)).optional(),
  companyids: commaList(ticker).optional(),
  start_date: isoDate.optional(),
  end_date: isoDateEnd.optional(),
  limit: integerParam().min(1).max(500).optional(),
  page: integerParam().min(1).max(100_000).default(1),
});

const articleFields = {
  title: z.string().trim().min(1).max(500),
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

export const IdParam = z.object({ id: z.string().min(1).max(64) });
