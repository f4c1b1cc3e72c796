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

/**
 * How an integer argument treats a fraction. This is the one rule for every integer argument of
 * every tool (docs/decisions.md, "Integers"):
 * - "truncated": every integer argument of the 22 v2 tools (SPEC §2: "truncated toward zero",
 *   so a v2 script that sends 1.5 gets 1: ttl_seconds, ttl_minutes, wait_seconds, by, id,
 *   priority, lease_seconds, last_seen_generation), and the durations of the extensions
 *   (offer_seconds, wait_seconds).
 * - "whole": the extensions' counts, weights and positions (weight, capacity, pid,
 *   expected_version, since_revision, max_attempts, limit) must be whole: 1.5 slots is a
 *   mistake, and truncating it would act on something the caller did not ask for.
 * Either way only a JSON number is an integer: "5" is refused, naming the field.
 */
export type IntegerClass = "truncated" | "whole";

// Each integer argument's class, by its schema: the validation tests read it from the catalogue,
// so a new tool's integer argument is tested without anyone listing it (and not published on the wire).
const CLASSES = new WeakMap<object, IntegerClass>();

/** The class of a tool argument's schema (optional or not); undefined for a non-integer argument. */
export function integerClass(schema: v.GenericSchema): IntegerClass | undefined {
  const inner = schema.type === "optional" ? (schema as v.OptionalSchema<v.GenericSchema, unknown>).wrapped : schema;
  return CLASSES.get(inner);
}

function classed<S extends object>(cls: IntegerClass, schema: S): S {
  CLASSES.set(schema, cls);
  return schema;
}

type Range = { min?: number; max?: number };

/** The checks every integer argument shares, around the one step its class decides. */
function integerParts(field: string, description: string, range: Range) {
  const min = range.min ?? -Number.MAX_SAFE_INTEGER;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  return {
    number: v.number((i) => `${field} must be a number (got ${shown(i.input)})`),
    finite: v.finite<number, string>(`${field} must be a finite number`),
    min: v.minValue<number, number, v.ErrorMessage<v.MinValueIssue<number, number>>>(min, (i) => `${field} must be >= ${min} (got ${shown(i.input)})`),
    max: v.maxValue<number, number, v.ErrorMessage<v.MaxValueIssue<number, number>>>(max, (i) => `${field} must be <= ${max} (got ${shown(i.input)})`),
    description: v.description<number, string>(description),
  };
}

/** A count, weight, capacity, priority, id, version or pid: a fraction is refused. */
export function whole(field: string, description: string, range: Range = {}) {
  const p = integerParts(field, description, range);
  const integer = v.integer<number, v.ErrorMessage<v.IntegerIssue<number>>>((i) => `${field} must be a whole number (got ${shown(i.input)})`);
  return classed("whole", v.pipe(p.number, p.finite, integer, p.min, p.max, p.description));
}

/** A duration (seconds; minutes for ttl_minutes): a fraction is truncated toward zero (v2's rule). */
export function truncated(field: string, description: string, range: Range = {}) {
  const p = integerParts(field, description, range);
  return classed("truncated", v.pipe(p.number, p.finite, v.transform(Math.trunc), p.min, p.max, p.description));
}

/** wait_seconds and the like: any number is accepted, truncated and clamped into [0, max]. */
export function clampedSeconds(field: string, description: string, max = MAX_WAIT_SECONDS) {
  return classed(
    "truncated",
    v.pipe(
      v.number((i) => `${field} must be a number (got ${shown(i.input)})`),
      v.check((n) => !Number.isNaN(n), `${field} must be a number (got NaN)`),
      v.transform((n) => Math.min(max, Math.max(0, Math.trunc(n)))),
      v.description(description),
    ),
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
    truncated(
      "ttl_seconds",
      `${what}${defaultSeconds !== undefined ? ` Default ${defaultSeconds}.` : ""}`,
      { max: MAX_TTL_SECONDS },
    ),
  ),
  ttl_minutes: v.optional(truncated("ttl_minutes", "Deprecated alias: minutes instead of seconds. ttl_seconds wins.", { max: MAX_TTL_SECONDS / 60 })),
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
