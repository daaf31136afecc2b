// The news stores' domain errors carry no status: news/errors.ts alone answers each kind, byte for byte in the
// generator's validation shape (plain Node, through the service's own onError).
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { newsErrorResponse } from "../../src/news/errors";
import { duplicateRecord, recordNotFound, unknownReference } from "../../src/news/store/errors";

/** The answer newsErrorResponse gives when a handler throws `error`. */
async function answerTo(error: Error) {
  const app = new Hono().get("/", () => {
    throw error;
  });
  app.onError(newsErrorResponse);
  const response = await app.request("/");
  return { status: response.status, type: response.headers.get("Content-Type"), text: await response.text() };
}

describe("news domain errors as answered by news/errors.ts", () => {
  it("answers not_found with 404 under the rule exists, naming the id", async () => {
    expect(await answerTo(recordNotFound())).toEqual({
      status: 404,
      type: "application/json",
      text: '{"valid":false,"name":"exists","param":"id","message":"id names no record"}',
    });
  });

  it("answers conflict with 409 under the rule unique, naming the field", async () => {
    expect(await answerTo(duplicateRecord("email", "email already registered"))).toEqual({
      status: 409,
      type: "application/json",
      text: '{"valid":false,"name":"unique","param":"email","message":"email already registered"}',
    });
  });

  it("answers invalid (an unknown reference) with 400 under the rule exists, echoing the value before the message", async () => {
    const error = unknownReference("companies", "BHP,XYZ", "companies names unknown tickers: XYZ");
    expect(await answerTo(error)).toEqual({
      status: 400,
      type: "application/json",
      text:
        '{"valid":false,"name":"exists","param":"companies","value":"BHP,XYZ",' +
        '"message":"companies names unknown tickers: XYZ"}',
    });
  });
});
