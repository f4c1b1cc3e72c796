// The bounds on a path-claim pattern. A pattern comes from an agent, so a runaway or hostile
// one is refused when it is compiled rather than allowed to make every later overlap check in
// its room slow. Each bound sits far above what a real repository path needs; docs/decisions.md
// quotes these numbers, so change them together.
import { AirlockError } from "../../errors.ts";

/** Characters in a pattern as given. Real repository-relative paths stay under a few hundred
 *  characters (Linux's PATH_MAX of 4096 is for whole absolute paths), and the automaton grows
 *  with the length, so 1024 keeps the worst case small while leaving room for long brace lists. */
export const MAX_PATTERN_LENGTH = 1024;

/** `/`-separated segments, counting those inside braces. Source trees rarely go 20 levels deep;
 *  64 is the same order as the pattern length allows for short names anyway. */
export const MAX_SEGMENTS = 64;

/** Levels of `{...}` inside `{...}`. Hand-written patterns use one or two; 8 allows generated
 *  ones while keeping the parser's recursion shallow. */
export const MAX_BRACE_DEPTH = 8;

/** Brace alternatives in the whole pattern (a `{a,b,c}` counts 3). Braces compile to branches of
 *  one automaton, not to expanded strings, so this bounds the branching a product step has to
 *  consider rather than an exponential expansion; 256 is several times a long hand-written list. */
export const MAX_ALTERNATIVES = 256;

/** States of one compiled automaton (after dropping states that cannot lead to a match). An
 *  overlap check explores at most the product of two automata, times 4 for the `.`/`..` guard,
 *  so this is what bounds the worst case of a single check. Each pattern character yields at most
 *  two states (a token's "separator emitted" and "inside" states; `**`, two characters, has four),
 *  plus the start and a literal's implied `/**`, so every pattern within MAX_PATTERN_LENGTH fits:
 *  this bound is the safety net should the syntax ever grow. Measured at the length bound: about
 *  1,030 states, and a product of two such adversarial automata takes about 0.1 s. */
export const MAX_AUTOMATON_STATES = 2 * MAX_PATTERN_LENGTH + 16;

/** Compiled patterns kept for reuse: a room with a thousand claims plus the patterns being
 *  checked against it fit, so a steady-state check compiles nothing. */
export const GLOB_CACHE_SIZE = 4096;

/** A pattern quoted for an error message, cut short so a 1 MB pattern makes a short message. */
export function quotePattern(p: string): string {
  return JSON.stringify(p.length > 80 ? `${p.slice(0, 80)}…` : p);
}

export function patternError(message: string): AirlockError {
  return new AirlockError("invalid_argument", message);
}
