// The bounds on a path-claim pattern. A pattern comes from an agent, so a runaway or hostile
// one is refused when it is compiled rather than allowed to make every later overlap check in
// its room slow. Each bound sits above what a real repository path or hand-written glob needs
// (the wildcard tail, the one that bounds the cost of a check, with the least room to spare);
// docs/decisions.md quotes these numbers, so change them together.
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

/** Characters from the first `*`, `**` or `{` to the end of the pattern: its wildcard tail. This,
 *  not the length, is what makes an overlap check expensive, so it is bounded tightly while
 *  literal paths keep the full MAX_PATTERN_LENGTH.
 *
 *  Why it bounds a check: a pattern's automaton is a head (literal characters, `?`, classes and
 *  `/`: one token per path character, no loop, no fork) followed by the tail. A head state is
 *  reached after one fixed number of path characters only, so two heads move in lockstep and pair
 *  up along a single diagonal: at most min(|A|, |B|) product pairs. Only a tail state lets the
 *  other side advance on its own: it can stay put (the loop of a `*` or `**`) or be reached after
 *  different numbers of characters (brace branches of unequal lengths, anything after a loop).
 *  So every other reachable pair has a tail state on at least one side, and
 *      reachable pairs <= min(|A|, |B|) + |tail(A)| * |B| + |A| * |tail(B)|
 *  (times 4 for the `.`/`..` guard of the search). A tail of W characters has at most 2W + 4
 *  states (a literal's implied `/**` is such a tail of 4) and a whole pattern at most
 *  MAX_AUTOMATON_STATES, so a check is O(W x MAX_PATTERN_LENGTH) rather than
 *  O(MAX_PATTERN_LENGTH^2): without this bound two `*a*a...` patterns of 1024 characters settle
 *  a million pairs, about 110 ms for one check, and a room of such claims stalls the daemon.
 *
 *  Measured at 64: the worst pair found (a `*?*?...` tail against a 1024-character pattern ending
 *  in `*\*\*...`, which also makes the witness search run three times) takes about 8-10 ms, and
 *  without that forced re-search about 3 ms. Real globs keep their wildcards after a literal
 *  directory and the tail short: `src/api/**\/*.{ts,tsx}` has 13, `**\/{node_modules,dist,build,coverage}/**`
 *  40; a longer one can put its literal segments first. */
export const MAX_WILDCARD_TAIL = 64;

/** States of one compiled automaton (after dropping states that cannot lead to a match). An
 *  overlap check explores at most the product of two automata, times 4 for the `.`/`..` guard,
 *  so this is what bounds the worst case of a single check. Each pattern character yields at most
 *  two states (a token's "separator emitted" and "inside" states; `**`, two characters, has four),
 *  plus the start and a literal's implied `/**`, so every pattern within MAX_PATTERN_LENGTH fits:
 *  this bound is the safety net should the syntax ever grow. Measured at the length bound: about
 *  1,030 states. What keeps the product of two automata small is MAX_WILDCARD_TAIL. */
export const MAX_AUTOMATON_STATES = 2 * MAX_PATTERN_LENGTH + 16;

/** Product states one call may settle across all its overlap checks (at ~80 ns a state, about
 *  40 ms of work). A single worst-case check within the pattern bounds settles a few hundred
 *  thousand at most, and a typical one tens, so a call checking many paths against a large room
 *  of ordinary claims stays far below it; a room filled with worst-case patterns cannot make one
 *  call hold the event loop for longer. A call that needs more is refused with an error rather
 *  than answered with a guess: the engine stays exact, and other calls keep their latency. */
export const MAX_CHECK_STEPS = 500_000;

/** Compiled patterns kept for reuse: a room with a thousand claims plus the patterns being
 *  checked against it fit, so a steady-state check compiles nothing. */
export const GLOB_CACHE_SIZE = 4096;

/** A pattern quoted for an error message, cut short so a 1 MB pattern makes a short message. */
export function quotePattern(p: string): string {
  return JSON.stringify(p.length > 80 ? `${p.slice(0, 80)}…` : p);
}

/** What one call may still spend on overlap checks (see MAX_CHECK_STEPS). */
export interface CheckBudget {
  left: number;
}

export function checkBudget(): CheckBudget {
  return { left: MAX_CHECK_STEPS };
}

export function budgetError(): AirlockError {
  return new AirlockError(
    "invalid_argument",
    `these paths are too costly to check against the claims in this room (more than ${MAX_CHECK_STEPS} search steps in one call): ` +
      "claim narrower patterns that start with literal directories, or ask the room's lead to force-release claims with long wildcard patterns",
  );
}

export function patternError(message: string): AirlockError {
  return new AirlockError("invalid_argument", message);
}
