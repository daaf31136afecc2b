// Pins the proxy's part of GET /openapi.json to a snapshot taken before its routes were declared with createRoute
// (app.openapi.json beside this file). Only the proxy's paths and components are compared: every path and component
// of the snapshot must be present and equal (key order aside), while paths and components that other services add to
// the one document are allowed.
import { describe, expect, it } from "vitest";
import { call } from "../helpers/http";
import snapshot from "./app.openapi.json";

type Document = {
  openapi: string;
  info: unknown;
  paths: Record<string, unknown>;
  components: Record<string, Record<string, unknown>>;
};

describe("GET /openapi.json", () => {
  it("documents the proxy's routes and components exactly as the snapshot", async () => {
    const response = await call("/openapi.json");
    expect(response.status).toBe(200);
    const document = (await response.json()) as Document;
    const expected = snapshot as unknown as Document;
    expect(document.openapi).toBe(expected.openapi);
    expect(document.info).toEqual(expected.info);
    for (const [path, operations] of Object.entries(expected.paths)) {
      expect({ path, operations: document.paths[path] }).toEqual({ path, operations });
    }
    for (const [kind, entries] of Object.entries(expected.components)) {
      for (const [name, entry] of Object.entries(entries)) {
        expect({ kind, name, entry: document.components[kind]?.[name] }).toEqual({ kind, name, entry });
      }
    }
  });
});
