// Finds a key given twice in one object of a JSON text, which JSON.parse silently resolves to its last value. A decoder
// that must refuse duplicates, as Go's protojson does, asks the text: the parsed value no longer holds them.

type Frame = { keys: Set<string>; key: string } | { index: number };

/** Where the value being read sits: `a.b[2].c`, as the proto3 JSON decoder's refusals name a field. */
function pathOf(frames: Frame[], key: string): string {
  const steps = frames.slice(0, -1).map((frame) => ("keys" in frame ? { key: frame.key } : { index: frame.index }));
  let path = "";
  for (const [at, step] of [...steps, { key }].entries()) {
    path += "key" in step ? `${at === 0 ? "" : "."}${step.key}` : `[${step.index}]`;
  }
  return path;
}

/** The index of the quote that ends the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i;
  }
  return text.length;
}

/**
 * The path of the first key an object of `text` gives twice (compared as decoded, so `"a"` and `"\u0061"` are one
 * key), or undefined. One pass over the text, which must be JSON that JSON.parse accepts (it is only asked after).
 */
export function repeatedJsonKey(text: string): string | undefined {
  const frames: Frame[] = [];
  let keyNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (keyNext) {
        const frame = frames[frames.length - 1] as { keys: Set<string>; key: string };
        const raw = text.slice(i + 1, end);
        const key = raw.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (frame.keys.has(key)) return pathOf(frames, key);
        frame.keys.add(key);
        frame.key = key;
        keyNext = false;
      }
      i = end;
    } else if (c === 0x7b) {
      frames.push({ keys: new Set(), key: "" });
      keyNext = true;
    } else if (c === 0x5b) {
      frames.push({ index: 0 });
      keyNext = false;
    } else if (c === 0x7d || c === 0x5d) {
      frames.pop();
      keyNext = false;
    } else if (c === 0x2c) {
      const frame = frames[frames.length - 1];
      if (frame !== undefined && "keys" in frame) keyNext = true;
      else if (frame !== undefined) frame.index++;
    }
  }
  return undefined;
}
