// The tokeniser of HAProxy params (pure, plain Node) against HAProxy 2.6's parsing rules: words, quotes, escapes and
// comments read as HAProxy reads them, and the lines it refuses with their exact reason.
import { describe, expect, it } from "vitest";
import { tokenizeLine } from "../../../src/proxy/haproxy-params/tokenizer";
import { words } from "../../support/proxy-params";

describe("tokenizeLine (HAProxy 2.6 parse_line)", () => {
  it.each([
    ["a  b\tc", ["a", "b", "c"]],
    ["  a b  ", ["a", "b"]],
    ['a "b c" d', ["a", "b c", "d"]],
    ["a 'b c' d", ["a", "b c", "d"]],
    ['"pro"gram x', ["program", "x"]],
    ["'fr'ont\"end\"", ["frontend"]],
    ["a\\ b", ["a b"]],
    ["a\\\\b", ["a\\b"]],
    ["a\\#b", ["a#b"]],
    ['a\\"b', ['a"b']],
    ["a\\'b", ["a'b"]],
    ['"a\\"b"', ['a"b']],
    ["\\x70rogram", ["program"]],
    ["a\\x2fb", ["a/b"]],
    ["a\\tb", ["a\tb"]],
    ['"a\\r\\n"', ["a\r\n"]],
    ["\\program", ["\\program"]],
    ["a\\qb", ["a\\qb"]],
    ["'a\\x41 $HOME \"b'", ['a\\x41 $HOME "b']],
    ['"a \\$1"', ["a $1"]],
    ["^/a$ $b", ["^/a$", "$b"]],
    ['"" a', ["", "a"]],
    ["", []],
  ])("reads %j as %j", (line, expected) => {
    expect(words(line)).toEqual(expected);
  });

  it("ends the line at an unquoted #, even inside a word, and keeps the comment and where the last word ends", () => {
    expect(tokenizeLine("balance roundrobin # tuned")).toEqual({
      ok: true,
      value: { words: ["balance", "roundrobin"], comment: "# tuned", end: 18 },
    });
    expect(tokenizeLine("a b#c d")).toEqual({ ok: true, value: { words: ["a", "b"], comment: "#c d", end: 3 } });
    expect(tokenizeLine("# only a comment")).toEqual({
      ok: true,
      value: { words: [], comment: "# only a comment", end: 0 },
    });
    expect(words("a \"b#c\" 'd#e' f\\#g")).toEqual(["a", "b#c", "d#e", "f#g"]);
    // An escaped or quoted blank belongs to its word: the line is cut after it, never inside an escape.
    expect(tokenizeLine("a\\  #c")).toEqual({ ok: true, value: { words: ["a "], comment: "#c", end: 3 } });
    expect(tokenizeLine('"a " \\t')).toEqual({ ok: true, value: { words: ["a ", "\t"], comment: null, end: 7 } });
  });

  it.each([
    ['a "b', "unterminated quote"],
    ["a 'b", "unterminated quote"],
    ["'a\\'b'", "unterminated quote"],
    ["balance roundrobin \\", "a trailing backslash is not a line continuation in HAProxy"],
    ["a \\x4", '"\\x" must be followed by two hexadecimal digits'],
    ["a \\xzz", '"\\x" must be followed by two hexadecimal digits'],
    ["file\\x00x", '"\\x00" makes a control character'],
    ["a \\x1b", '"\\x1b" makes a control character'],
    ["a \\x0d\\x0a", '"\\x0d" makes a control character'],
    ["a \\x0a", '"\\x0a" makes a control character'],
    ["a \\x09", '"\\x09" makes a control character'],
    ["a \\x7f", '"\\x7f" makes a control character'],
    ["a \\x85", '"\\x85" makes a control character'],
    ['"${HOME}"', "environment expansion (${NAME} or $NAME) is not allowed"],
    ['"$HOME"', "environment expansion (${NAME} or $NAME) is not allowed"],
    ['"${.LINE}"', "environment expansion (${NAME} or $NAME) is not allowed"],
    ['"a$"', 'a "$" inside double quotes must be written "\\$"'],
    ['"$1"', 'a "$" inside double quotes must be written "\\$"'],
  ])("refuses %j: %s", (line, error) => {
    expect(tokenizeLine(line)).toEqual({ ok: false, error });
  });
});
