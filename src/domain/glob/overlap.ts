// Whether two patterns can match a common path, and one such path (the witness).
//
// The product of the two automata is searched cheapest-first, with a third component that
// rejects `.` and `..` segments (a normalized path has none, though `{.,a}` or `?` could spell
// one). Each product state is settled once, so a check costs at most |A| x |B| x 4 states, which
// the per-pattern bounds keep small whatever the patterns. The search order makes the witness a
// shortest common path (a segment opening with `.` counts a little longer), and each character
// is picked from what both sides accept, preferring plain ones (`a` first) so the witness reads
// well and contains no glob characters. A witness
// holds a glob character only when every common path does: both sides escaping the same
// character (`\*` against `[*]`) can force one, so the search is repeated with those excluded
// before one is accepted.
import { AirlockError } from "../../errors.ts";
import type { Automaton } from "./automaton.ts";
import { type CharSet, DOT, SLASH, fromRanges, has, intersect } from "./charset.ts";
import { firstFoldedIn } from "./case-fold.ts";
import { type CompiledGlob, automatonOf } from "./compile.ts";
import { budgetError, type CheckBudget } from "./limits.ts";
import { slashRange } from "./segments.ts";

/** Characters in order of preference for a witness; a search may be limited to the first tiers. */
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
const TIER_CLEAN = 5;
const TIER_NO_GLOB = 6;
const TIER_ALL = 7;

function tierOf(c: number): number {
  if (c === DOT || c === SLASH) return 0;
  for (let t = 0; t < TIERS.length; t++) if (has(TIERS[t]!, c)) return t;
  return TIER_ALL;
}

/** A witness for the two patterns, or null when no path matches both. Both must have been
 *  compiled with the same case option. With a budget, every product state settled is charged
 *  to it, and running out throws (budgetError): a call's checks are bounded as a whole. */
export function overlap(a: CompiledGlob, b: CompiledGlob, budget?: CheckBudget): string | null {
  if (a.caseInsensitive !== b.caseInsensitive) {
    throw new AirlockError("internal", `globs compiled with different case options (${a.source}, ${b.source})`);
  }
  const pa = a.literalPrefix;
  const pb = b.literalPrefix;
  for (let i = 0; i < pa.length && i < pb.length; i++) if (pa[i] !== pb[i]) return null;
  const A = automatonOf(a);
  const B = automatonOf(b);
  // Paths with a different number of segments never meet: no search needed.
  const ra = slashRange(A);
  const rb = slashRange(B);
  if (ra.max < rb.min || rb.max < ra.min) return null;
  const ci = a.caseInsensitive;
  const first = search(A, B, ci, TIER_ALL, budget);
  if (first === null) return null;
  const worst = Math.max(0, ...Array.from(first, (ch) => tierOf(ch.codePointAt(0)!)));
  if (worst <= TIER_CLEAN) return first;
  const clean = search(A, B, ci, TIER_CLEAN, budget);
  if (clean !== null) return clean;
  if (worst <= TIER_NO_GLOB) return first;
  return search(A, B, ci, TIER_NO_GLOB, budget) ?? first;
}

/** The most preferred character of `set` within the first `maxTier` tiers, never `.` or `/`
 *  (those are steps of their own); -1 if none. Case-insensitive paths are folded, so only
 *  characters that fold to themselves can appear in them. */
function pick(set: CharSet, maxTier: number, ci: boolean): number {
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

// The third component of a product state: what the current path segment is so far.
const SEG_START = 0;
const SEG_DOT = 1;
const SEG_DOTDOT = 2;
const SEG_NAME = 3;
const AFTER_DOT: readonly number[] = [SEG_DOT, SEG_DOTDOT, SEG_NAME, SEG_NAME];

// Step costs for the search. A `.` that opens a segment costs more than one extra character, so
// `src/*.ts` against `src/**` answers `src/a.ts` rather than the equally valid but odd `src/.ts`.
const STEP_COST = 1;
const HIDDEN_NAME_COST = 3;
const BUCKETS = 4; // > the largest step cost, so a cyclic bucket queue never wraps onto itself

/** Pairs of distinct sets remembered per search (4 MB of Int32 at most); beyond that, a step
 *  intersects afresh. Only hostile patterns have that many distinct sets. */
const MEMO_LIMIT = 1 << 20;

function isSlashSet(s: CharSet): boolean {
  return s.length === 2 && s[0] === SLASH && s[1] === SLASH;
}

/** Cheapest common accepted path, by a bucket-queue Dijkstra over product states. */
function search(A: Automaton, B: Automaton, ci: boolean, maxTier: number, budget: CheckBudget | undefined): string | null {
  const nB = B.size;
  const words = ((A.size * nB * 4) >>> 5) + 1;
  const settled = new Uint32Array(words);
  const queuedCheap = new Uint32Array(words); // queued by a cost-1 step: nothing later can beat it
  const queuedDear = new Uint32Array(words); // queued by a dearer step: a cheaper one may follow
  const setsA = A.sets;
  const setsB = B.sets;
  const memo = setsA.length * setsB.length <= MEMO_LIMIT ? new Int32Array(setsA.length * setsB.length) : null;
  const slashA = setsA.map(isSlashSet);
  const slashB = setsB.map(isSlashSet);
  // One entry per push: the product state, the entry it came from, and the character taken.
  const keys: number[] = [0];
  const parents: number[] = [-1];
  const chars: number[] = [0];
  const buckets: number[][] = Array.from({ length: BUCKETS }, () => []);
  buckets[0]!.push(0);
  let pending = 1;
  let dist = 0;
  const push = (key: number, c: number, parent: number, cost: number) => {
    const w = key >>> 5;
    const bit = 1 << (key & 31);
    if ((settled[w]! | queuedCheap[w]!) & bit) return;
    if (cost === STEP_COST) queuedCheap[w]! |= bit;
    else if (queuedDear[w]! & bit) return;
    else queuedDear[w]! |= bit;
    keys.push(key);
    parents.push(parent);
    chars.push(c);
    buckets[(dist + cost) % BUCKETS]!.push(keys.length - 1);
    pending++;
  };
  while (pending > 0) {
    const bucket = buckets[dist % BUCKETS]!;
    for (let k = 0; k < bucket.length; k++) {
      const entry = bucket[k]!;
      pending--;
      const key = keys[entry]!;
      const w = key >>> 5;
      const bit = 1 << (key & 31);
      if (settled[w]! & bit) continue;
      settled[w]! |= bit;
      if (budget && --budget.left < 0) throw budgetError();
      const d = key & 3;
      const pair = key >>> 2;
      const sa = (pair / nB) | 0;
      const sb = pair - sa * nB;
      if (d === SEG_NAME && A.accept[sa] && B.accept[sb]) return witness(entry, parents, chars);
      for (let ea = A.edgeStart[sa]!; ea < A.edgeStart[sa + 1]!; ea++) {
        const ia = A.edgeSetIndex[ea]!;
        const ta = A.edgeTo[ea]! * nB;
        for (let eb = B.edgeStart[sb]!; eb < B.edgeStart[sb + 1]!; eb++) {
          const ib = B.edgeSetIndex[eb]!;
          // Every step is either exactly `/` or excludes it, so a separator needs both sides.
          if (slashA[ia] || slashB[ib]) {
            if (slashA[ia] && slashB[ib] && d === SEG_NAME) push((ta + B.edgeTo[eb]!) * 4 + SEG_START, SLASH, entry, STEP_COST);
            continue;
          }
          const m = ia * setsB.length + ib;
          let info = memo ? memo[m]! : 0;
          if (info === 0) {
            const both = intersect(setsA[ia]!, setsB[ib]!);
            info = both.length === 0 ? 1 : 1 + (has(both, DOT) ? 1 : 0) + 2 * (pick(both, maxTier, ci) + 1);
            if (memo) memo[m] = info;
          }
          if (info === 1) continue;
          const c = ((info - 1) >> 1) - 1;
          const next = ta + B.edgeTo[eb]!;
          if (c >= 0) push(next * 4 + SEG_NAME, c, entry, STEP_COST);
          if ((info - 1) & 1) push(next * 4 + AFTER_DOT[d]!, DOT, entry, d === SEG_START ? HIDDEN_NAME_COST : STEP_COST);
        }
      }
    }
    bucket.length = 0;
    dist++;
  }
  return null;
}

function witness(at: number, parents: readonly number[], chars: readonly number[]): string {
  const out: number[] = [];
  for (let i = at; i > 0; i = parents[i]!) out.push(chars[i]!);
  let text = "";
  for (let i = out.length - 1; i >= 0; i--) text += String.fromCodePoint(out[i]!);
  return text;
}
