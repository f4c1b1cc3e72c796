// Patterns in, compiled automata out, with a bounded cache; and matching a concrete path.
//
// A room's claims are checked against every new claim and every edit hook, so the same few
// patterns are compiled over and over; the cache makes a steady-state check compile nothing.
// Bounds are enforced here, before any work proportional to the pattern is done.
import { AirlockError } from "../../errors.ts";
import { type Automaton, buildAutomaton } from "./automaton.ts";
import { has } from "./charset.ts";
import { foldCodePoint } from "./case-fold.ts";
import { GLOB_CACHE_SIZE, MAX_PATTERN_LENGTH, patternError, quotePattern } from "./limits.ts";
import { normalizePattern } from "./normalize.ts";
import { parsePattern } from "./parse.ts";

export interface GlobOptions {
  /** Compare case-insensitively (rooms on case-insensitive file systems). Both sides of an
   *  overlap check must be compiled the same way. */
  caseInsensitive?: boolean;
}

export interface CompiledGlob {
  /** The normalized pattern. */
  readonly source: string;
  readonly caseInsensitive: boolean;
  /** No wildcard, class or brace: names one path, and everything below it. */
  readonly literal: boolean;
  /** Leading segments that every matching path has verbatim (folded when case-insensitive);
   *  stops at the first segment with any glob syntax. Two patterns whose prefixes differ at some
   *  index cannot overlap, which lets a caller index claims by their first segment. */
  readonly literalPrefix: readonly string[];
}

const automata = new WeakMap<CompiledGlob, Automaton>();
const cache = new Map<string, CompiledGlob>();

/** Compiles (or fetches from the cache) a pattern; it is normalized first. Throws an
 *  `invalid_argument` AirlockError naming the rule for a malformed or over-bound pattern. */
export function compileGlob(pattern: string, opts: GlobOptions = {}): CompiledGlob {
  const caseInsensitive = opts.caseInsensitive === true;
  const key = (caseInsensitive ? "i:" : "s:") + pattern;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key); // re-inserted below as the most recently used
    cache.set(key, hit);
    return hit;
  }
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw patternError(`pattern is too long: at most ${MAX_PATTERN_LENGTH} characters (got ${pattern.length}: ${quotePattern(pattern)})`);
  }
  const source = normalizePattern(pattern);
  const parsed = parsePattern(source, caseInsensitive);
  const glob: CompiledGlob = Object.freeze({
    source,
    caseInsensitive,
    literal: parsed.literal,
    literalPrefix: Object.freeze(parsed.literalPrefix),
  });
  automata.set(glob, buildAutomaton(parsed.seq, parsed.literal, source));
  cache.set(key, glob);
  if (cache.size > GLOB_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return glob;
}

export function automatonOf(g: CompiledGlob): Automaton {
  const a = automata.get(g);
  if (!a) throw new AirlockError("internal", "a glob must come from compileGlob");
  return a;
}

/** Whether a concrete path (normalized first, so `./src//a` is `src/a`) matches the pattern. */
export function matches(g: CompiledGlob, path: string): boolean {
  const a = automatonOf(g);
  const p = normalizePattern(path);
  let current = [0];
  const mark = new Int32Array(a.size).fill(-1);
  let step = 0;
  for (const ch of p) {
    let c = ch.codePointAt(0)!;
    if (g.caseInsensitive) c = foldCodePoint(c);
    const next: number[] = [];
    for (const s of current) {
      for (let e = a.edgeStart[s]!; e < a.edgeStart[s + 1]!; e++) {
        const t = a.edgeTo[e]!;
        if (mark[t] !== step && has(a.sets[a.edgeSetIndex[e]!]!, c)) {
          mark[t] = step;
          next.push(t);
        }
      }
    }
    if (next.length === 0) return false;
    current = next;
    step++;
  }
  return current.some((s) => a.accept[s] === 1);
}
