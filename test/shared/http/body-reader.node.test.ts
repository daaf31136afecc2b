// The shared body reader's decoders (plain Node): each refusal is its own class carrying what a service needs to word
// it, and the JSON nesting check counts the text as the value walk counts the parse.
import { describe, expect, it } from "vitest";
import { InvalidJsonBody } from "../../../src/shared/http/errors";
import { MalformedMultipart, multipartEntries, urlEncodedEntries } from "../../../src/shared/http/form-body";
import {
  InvalidUtf8,
  JsonTooDeep,
  mediaTypeOf,
  parseJsonText,
  PayloadTooLarge,
  readBodyBytes,
  readBodyText,
  readJsonBodyWithin,
  refuseLoneSurrogates,
  requireMediaType,
  UnsupportedMediaType,
} from "../../../src/shared/http/request-body";

const limit = { maxBytes: 64, setting: "TEST_MAX_BODY_BYTES" };
const request = (body: BodyInit, type = "application/json") =>
  new Request("http://test/", { method: "POST", body, headers: { "content-type": type } });

describe("JSON", () => {
  it("parses text nested up to the limit and refuses one level more, before parsing", () => {
    expect(parseJsonText('{"a":[1]}', 2)).toEqual({ a: [1] });
    const refused = (() => {
      try {
        parseJsonText('{"a":[[', 2);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(JsonTooDeep);
    expect(refused).toMatchObject({ maxDepth: 2, status: 400, message: "request body is nested deeper than 2 levels" });
  });

  it("refuses text that is not JSON, and counts no nesting without a limit", () => {
    expect(() => parseJsonText("{")).toThrow(InvalidJsonBody);
    expect(parseJsonText("[[[[[[1]]]]]]")).toEqual([[[[[[1]]]]]]);
  });

  it("refuses a lone surrogate in a key or a string, accepts a pair", () => {
    expect(() => refuseLoneSurrogates({ a: ["\ud800"] }, '{"a":["\\ud800"]}')).toThrow(InvalidUtf8);
    expect(() => refuseLoneSurrogates({ "\udc00": 1 }, '{"\\udc00":1}')).toThrow(InvalidUtf8);
    expect(refuseLoneSurrogates({ a: "😀" }, '{"a":"\\ud83d\\ude00"}')).toBeUndefined();
  });

  it("reads a body within the limit, and refuses one past it with the setting named", async () => {
    expect(await readJsonBodyWithin(request('{"a":1}'), limit, 4)).toEqual({ a: 1 });
    await expect(readJsonBodyWithin(request(`"${"x".repeat(64)}"`), limit)).rejects.toThrow(
      new PayloadTooLarge(64, "TEST_MAX_BODY_BYTES"),
    );
  });

  it("reads a declared length whole, and an encoded response as a stream stopped at the limit", async () => {
    const declared = new Request("http://test/", { method: "POST", body: "héllo", headers: { "content-length": "6" } });
    expect(await readBodyText(declared, limit)).toBe("héllo");
    // fetch decodes an encoded response, so its declared (encoded) length says nothing about the bytes read.
    const chunks = [new Uint8Array(40).fill(120), new Uint8Array(40).fill(120)];
    const body = new ReadableStream<Uint8Array>({ pull: (controller) => void controller.enqueue(chunks.shift()!) });
    const encoded = new Response(body, { headers: { "content-length": "10", "content-encoding": "gzip" } });
    await expect(readBodyBytes(encoded, { ...limit, drainExcess: false })).rejects.toThrow(
      new PayloadTooLarge(64, "TEST_MAX_BODY_BYTES"),
    );
    // The stream was cancelled at the first chunk past the limit: the third pull never came.
    expect(chunks).toHaveLength(0);
  });
});

describe("media types", () => {
  it("names the media type without parameters, lower-cased", () => {
    expect(mediaTypeOf(new Headers({ "content-type": " Text/YAML ; charset=utf-8" }))).toBe("text/yaml");
    expect(mediaTypeOf(new Headers())).toBe("");
  });

  it("refuses a type the route does not take, naming what was sent", () => {
    const accepted = ["application/yaml", "text/plain"];
    expect(requireMediaType(request("a: 1", "application/yaml; charset=utf-8"), accepted)).toBeUndefined();
    const refused = (() => {
      try {
        requireMediaType(request("a: 1", "application/json"), accepted);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(UnsupportedMediaType);
    expect(refused).toMatchObject({ status: 415, type: "application/json", accepted });
  });
});

describe("forms", () => {
  it("decodes URL-encoded fields in order, refusing escapes that are not UTF-8", () => {
    expect(urlEncodedEntries("a=1&b&c=Zo%C3%AB+x&&d=100%")).toEqual([
      ["a", "1"],
      ["b", ""],
      ["c", "Zoë x"],
      ["d", "100%"],
    ]);
    expect(() => urlEncodedEntries("a=%FF")).toThrow(new InvalidUtf8("a form field"));
  });

  it("decodes multipart text fields, and refuses a body that is not multipart", async () => {
    const form = new FormData();
    form.append("name", "Zoë");
    const sent = new Response(form);
    const bytes = new Uint8Array(await sent.arrayBuffer());
    expect(await multipartEntries(bytes, sent.headers.get("content-type")!)).toEqual([["name", "Zoë"]]);
    await expect(multipartEntries(bytes, "multipart/form-data; boundary=other")).rejects.toThrow(MalformedMultipart);
  });
});
