// The pure parts of `npm start` (scripts/start/): reading the options as wrangler's yargs does.
import { describe, expect, it } from "vitest";
import { cliVars, optionValue, optionValues, wantsHelp } from "../../scripts/start/args.mjs";

describe("the options npm start reads", () => {
  it("reads --var as wrangler does: repeatable, greedy up to the next option, colons kept, the last one winning", () => {
    const args = ["--var", "A:1", "B:x:y", "--port", "9000", "--var=C:", "--var", "A:2", "--log-level", "log"];
    expect(cliVars(args)).toEqual({ A: "2", B: "x:y", C: "" });
  });

  it("takes one value of a single-value option, the last one given, in either spelling", () => {
    const args = ["--port", "9000", "extra", "--persist-to=/tmp/a", "-c", "other.toml", "--port=9001"];
    expect(optionValue(args, "--port")).toBe("9001");
    expect(optionValue(args, "--persist-to")).toBe("/tmp/a");
    expect(optionValue(args, "--config", { aliases: ["-c"] })).toBe("other.toml");
    expect(optionValue(args, "--ip")).toBeUndefined();
    expect(optionValues(["--env-file", "a", "b", "--x", "c"], "--env-file", { array: true })).toEqual(["a", "b"]);
  });

  it("sees -h and --help anywhere", () => {
    expect([["-h"], ["--port", "1", "--help"], ["--port", "-h"], ["--helpful"], []].map(wantsHelp)).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});
