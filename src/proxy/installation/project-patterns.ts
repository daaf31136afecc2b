// The project patterns of API users (and users' proxy permissions): regular expressions run on RE2's linear-time
// engine (re2js), so no pattern a tenant's administrator stores can stall an isolate, checked when stored.
import { RE2JS } from "re2js";

/** Longest pattern stored; with RE2's own repeat limits this bounds the compiled program. */
export const MAX_PATTERN_LENGTH = 256;
/** Most patterns one user holds. */
export const MAX_PATTERNS = 64;

/** Project labels: only text of this shape ever reaches a pattern. */
export const LABEL_PATTERN = /^[a-z0-9]{2,32}$/;

/** Compiled patterns by source; bounded, oldest dropped first. */
const compiled = new Map<string, RE2JS | null>();
const MAX_COMPILED = 1000;

function compile(pattern: string): RE2JS | null {
  let entry = compiled.get(pattern);
  if (entry !== undefined) return entry;
  try {
    entry = pattern.length <= MAX_PATTERN_LENGTH ? RE2JS.compile(pattern) : null;
  } catch {
    // Stored before patterns were checked (backreferences, lookaround): it grants nothing.
    entry = null;
  }
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  compiled.set(pattern, entry);
  return entry;
}

/** Why a pattern cannot be stored, or undefined when it can. */
export function patternProblem(pattern: string): string | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH) return `must be at most ${MAX_PATTERN_LENGTH} characters`;
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (error) {
    const detail = error instanceof Error ? error.message.replace(/^error parsing regexp: /i, "") : "invalid";
    return `must be a regular expression in RE2 syntax (no backreferences or lookaround): ${detail}`;
  }
}

/** True when `label` is a project label and one of the patterns matches all of it. */
export function anyPatternMatchesLabel(patterns: readonly string[], label: string): boolean {
  if (!LABEL_PATTERN.test(label)) return false;
  return patterns.some((pattern) => compile(pattern)?.matches(label) ?? false);
}
