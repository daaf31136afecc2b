// Bodies that are not UTF-8, for the tests that refuse them: text and raw bytes joined into one byte string.
const encoder = new TextEncoder();

/** The parts joined: each string as its UTF-8 bytes, each number list as those bytes. */
export const bytes = (...parts: (string | number[])[]) =>
  new Uint8Array(parts.flatMap((part) => (typeof part === "string" ? [...encoder.encode(part)] : part)));
