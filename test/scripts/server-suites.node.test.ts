// `npm run test:fast` leaves out the Workers suites that need a server (TEST_NO_SERVERS): a suite that reads a server's
// binding but is missing from test/global-setup.ts's lists would fail there instead of being left out.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { serverBindings, serverSuites } from "../global-setup";
import { sourceFiles } from "../support/source-files";

const root = path.join(import.meta.dirname, "..", "..");

/** The files the Workers run takes (test/vitest.workers.config.ts), as paths from the root. */
const workersSuites = () =>
  sourceFiles(root, ["test"], /\.test\.ts$/).filter(
    (file) => !file.endsWith(".node.test.ts") && !/^test\/(integration|grpc-gateway)\//.test(file),
  );

describe("the suites that need a server", () => {
  it("lists every Workers suite that reads a server's binding", () => {
    const readsBinding = workersSuites().filter((file) => {
      const text = readFileSync(path.join(root, file), "utf8");
      return serverBindings.some((name) => new RegExp(`\\b${name}\\b`).test(text));
    });
    expect(readsBinding.filter((file) => !serverSuites.includes(file))).toEqual([]);
  });

  it("lists only files that exist", () => {
    expect(serverSuites.filter((file) => !existsSync(path.join(root, file)))).toEqual([]);
  });
});
