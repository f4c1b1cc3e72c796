// What one step of the overlap search may take, shared by the search (overlap.ts) and the walk
// over a forced head (head.ts), which must decide every step exactly as the search would.
//
// The character taken is picked from what both sides accept, preferring plain ones (`a` first)
// so the witness reads well; a search may be limited to the first tiers (overlap.ts repeats one
// with glob characters excluded before it accepts a witness holding one). A third component of a
// product state says what the current path segment is so far, so that `.` and `..` segments,
// which a normalized path never has, are never spelled.
import { type CharSet, DOT, SLASH, fromRanges, has, intersect } from "./charset.ts";
import { firstFoldedIn } from "./case-fold.ts";

/** Characters in order of preference for a witness. */
const TIERS: readonly CharSet[] = [
  fromRanges([[0x61, 0x7a]]), // a-z
  fromRanges([[0x30, 0x39]]), // 0-9
  fromRanges([[0x41, 0x5a]]), // A-Z
  fromRanges([[0x2d, 0x2d], [0x5f, 0x5f]]), // - _
  fromRanges([..." !\"#$%&'()+,:;<=>@^`|~"].map((c) => [c.charCodeAt(0), c.charCodeAt(0)] as [number, number])),
  fromRanges([[0xa0, 0xd7ff], [0xe000, 0x10ffff]]), // printable beyond ASCII
  fromRanges([[0, 0x1f], [0x7f, 0x9f], [0xd800, 0xdfff]]), // controls, lone surrogates
  fromRanges([..."*?[]{}\\"].map((c) => [c.charCodeAt(0), c.charCodeAt(0)] as [number, number])), // glob syntax
];
export const TIER_CLEAN = 5;
export const TIER_NO_GLOB = 6;
export const TIER_ALL = 7;

export function tierOf(c: number): number {
  if (c === DOT || c === SLASH) return 0;
  for (let t = 0; t < TIERS.length; t++) if (has(TIERS[t]!, c)) return t;
  return TIER_ALL;
}

/** The most preferred character of `set` within the first `maxTier` tiers, never `.` or `/`
 *  (those are steps of their own); -1 if none. Case-insensitive paths are folded, so only
 *  characters that fold to themselves can appear in them. */
export function pick(set: CharSet, maxTier: number, ci: boolean): number {
  if (set.length === 2 && set[0] === set[1]) {
    const c = set[0]!;
    if (c === DOT || c === SLASH || tierOf(c) > maxTier) return -1;
    return ci && firstFoldedIn(c, c) !== c ? -1 : c;
  }
  for (let t = 0; t <= maxTier; t++) {
    const within = intersect(set, TIERS[t]!);
    for (let i = 0; i < within.length; i += 2) {
      const c = ci ? firstFoldedIn(within[i]!, within[i + 1]!) : within[i]!;
      if (c >= 0) return c;
    }
  }
  return -1;
}

export function isSlashSet(s: CharSet): boolean {
  return s.length === 2 && s[0] === SLASH && s[1] === SLASH;
}

// The third component of a product state: what the current path segment is so far.
export const SEG_START = 0;
export const SEG_DOT = 1;
export const SEG_DOTDOT = 2;
export const SEG_NAME = 3;
export const AFTER_DOT: readonly number[] = [SEG_DOT, SEG_DOTDOT, SEG_NAME, SEG_NAME];

// Step costs for the search. A `.` that opens a segment costs more than one extra character, so
// `src/*.ts` against `src/**` answers `src/a.ts` rather than the equally valid but odd `src/.ts`.
export const STEP_COST = 1;
export const HIDDEN_NAME_COST = 3;
