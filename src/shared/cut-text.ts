// Text from outside (a publisher's answer, an error's message) cut to a length before it is quoted, stored or logged:
// a parser's message may quote megabytes of its input.

const marker = (cut: number) => `… [${cut} more characters cut]`;

/** `text` if it has at most `max` characters; else its start and a marker saying how many went, `max` in all. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - marker(text.length).length);
  // Never half a surrogate pair: D1 would store the lone half as U+FFFD.
  if (end > 0 && /[\uD800-\uDBFF]/.test(text[end - 1])) end--;
  return text.slice(0, end) + marker(text.length - end);
}
