// Argument schemas shared by every tool. Each builder names its field in every message, so a
// bad call is answered with the field and the rule ("ttl_seconds must be a number (got "x")").
// The same schemas are published as JSON Schema in tools/list.
import * as v from "valibot";

export const MAX_NAME_LENGTH = 1024; // room for "file:/an/absolute/path" resource names
export const MAX_ID_LENGTH = 256; // agent ids, authors, queues
export const MAX_VALUE_LENGTH = 256 * 1024; // note values and task payloads; the body limit is 1 MiB
export const MAX_LIST_LENGTH = 256; // names in one lock_resources call
export const MAX_WAIT_SECONDS = 50; // clients abandon tool calls near 60 s (Claude Code's default)
export const MAX_TTL_SECONDS = 366 * 24 * 3600; // a year: longer is a mistake, and keeps deadlines exact

function shown(input: unknown): string {
  if (input === undefined) return "nothing";
  if (typeof input === "string") return JSON.stringify(input.length > 40 ? `${input.slice(0, 40)}…` : input);
  if (Array.isArray(input)) return "an array";
  if (input === null) return "null";
  if (typeof input === "object") return "an object";
  return String(input);
}

/** A required, non-empty string. Empty counts as missing, as it did in v2. */
export function text(field: string, description: string, max = MAX_NAME_LENGTH) {
  return v.pipe(
    v.string((i) => (i.input == null ? `missing ${field}` : `${field} must be a string (got ${shown(i.input)})`)),
    v.minLength(1, `missing ${field}`),
    v.maxLength(max, (i) => `${field} must be at most ${max} characters (got ${(i.input as string).length})`),
    v.description(description),
  );
}

/** A string that may be empty (note values, payloads, expected values). */
export function anyText(field: string, description: string, max = MAX_VALUE_LENGTH) {
  return v.pipe(
    v.string((i) => (i.input == null ? `missing ${field}` : `${field} must be a string (got ${shown(i.input)})`)),
    v.maxLength(max, (i) => `${field} must be at most ${max} characters (got ${(i.input as string).length})`),
    v.description(description),
  );
}

/** A JSON number truncated toward zero, optionally range-checked. */
export function int(field: string, description: string, range: { min?: number; max?: number } = {}) {
  const min = range.min ?? -Number.MAX_SAFE_INTEGER;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  return v.pipe(
    v.number((i) => `${field} must be a number (got ${shown(i.input)})`),
    v.finite(`${field} must be a finite number`),
    v.transform(Math.trunc),
    v.minValue(min, (i) => `${field} must be >= ${min} (got ${shown(i.input)})`),
    v.maxValue(max, (i) => `${field} must be <= ${max} (got ${shown(i.input)})`),
    v.description(description),
  );
}

/** wait_seconds and the like: any number is accepted and clamped into [0, max]. */
export function clampedSeconds(field: string, description: string, max = MAX_WAIT_SECONDS) {
  return v.pipe(
    v.number((i) => `${field} must be a number (got ${shown(i.input)})`),
    v.check((n) => !Number.isNaN(n), `${field} must be a number (got NaN)`),
    v.transform((n) => Math.min(max, Math.max(0, Math.trunc(n)))),
    v.description(description),
  );
}

export function bool(field: string, description: string) {
  return v.pipe(
    v.boolean((i) => `${field} must be true or false (got ${shown(i.input)})`),
    v.description(description),
  );
}

export function textList(field: string, description: string) {
  return v.pipe(
    v.array(
      v.pipe(
        v.string((i) => `every entry of ${field} must be a string (got ${shown(i.input)})`),
        v.minLength(1, `entries of ${field} must not be empty`),
        v.maxLength(MAX_NAME_LENGTH, `entries of ${field} must be at most ${MAX_NAME_LENGTH} characters`),
      ),
      (i) => (i.input == null ? `missing ${field}` : `${field} must be an array of strings (got ${shown(i.input)})`),
    ),
    v.minLength(1, `missing ${field}`),
    v.maxLength(MAX_LIST_LENGTH, (i) => `${field} must have at most ${MAX_LIST_LENGTH} entries (got ${(i.input as unknown[]).length})`),
    v.description(description),
  );
}

/** ttl_seconds, and ttl_minutes as its deprecated alias; ttl_seconds wins when both are given. */
export const ttlArgs = (what: string, defaultSeconds?: number) => ({
  ttl_seconds: v.optional(
    int(
      "ttl_seconds",
      `${what}${defaultSeconds !== undefined ? ` Default ${defaultSeconds}.` : ""}`,
      { max: MAX_TTL_SECONDS },
    ),
  ),
  ttl_minutes: v.optional(int("ttl_minutes", "Deprecated alias: minutes instead of seconds. ttl_seconds wins.", { max: MAX_TTL_SECONDS / 60 })),
});

/** Seconds, from ttl_seconds or ttl_minutes×60, else the default (undefined: none). */
export function ttlSeconds(a: { ttl_seconds?: number | undefined; ttl_minutes?: number | undefined }, fallback?: number): number | undefined {
  if (a.ttl_seconds !== undefined) return a.ttl_seconds;
  if (a.ttl_minutes !== undefined) return a.ttl_minutes * 60;
  return fallback;
}

/** The first problem with the arguments, as one sentence. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0]!;
  const path = v.getDotPath(issue);
  if (issue.kind === "schema" && issue.input === undefined && path) return `missing ${path}`;
  return issue.message;
}
