// Account steps the news auth tests share: a password change through the API, as its owner.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { getUser } from "../../src/news/store/users";
import { database } from "../../src/shared/db";
import { basic, callJson } from "../helpers/http";

/** Changes the password with the old one as Basic credentials, expects 200; returns when the store says it changed. */
export async function changePassword(id: string, email: string, from: string, to: string): Promise<Date> {
  const response = await callJson(
    `/users/${id}/password`,
    "PUT",
    { password: to },
    { Authorization: basic(email, from) },
  );
  expect(response.status).toBe(200);
  return (await getUser(database(env.DB), id))!.passwordChangedAt!;
}
