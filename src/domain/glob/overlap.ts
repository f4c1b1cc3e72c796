// Whether two patterns can match a common path, and one such path (the witness).
//
// The product of the two automata is searched cheapest-first, with a third component that
// rejects `.` and `..` segments (a normalized path has none, though `{.,a}` or `?` could spell
// one). Each product state is settled once, so a check costs at most |A| x |B| x 4 states, which
// the per-pattern bounds keep small whatever the patterns. The search order makes the witness a
// shortest common path (a segment opening with `.` counts a little longer), and each character
// is picked from what both sides accept, preferring plain ones (`a` first; step.ts) so the
// witness reads well and contains no glob characters. A witness holds a glob character only when
// every common path does: both sides escaping the same character (`\*` against `[*]`) can force
// one, so the search is repeated with those excluded before one is accepted. Where one side can
// read only one character at a time (a literal path, a glob's literal head), the search starts
// after that run (head.ts), exactly where and as it would have been.
import { AirlockError } from "../../errors.ts";
import type { Automaton } from "./automaton.ts";
import { type CharSet, DOT, SLASH, has, intersect } from "./charset.ts";
import { type CompiledGlob, automatonOf } from "./compile.ts";
import { recall, remember } from "./below.ts";
import { forcedHead, type Head, headChars, headKeys } from "./head.ts";
import { budgetError, type CheckBudget } from "./limits.ts";
import { slashRange } from "./segments.ts";
import {
  AFTER_DOT,
  HIDDEN_NAME_COST,
  SEG_NAME,
  SEG_START,
  STEP_COST,
  TIER_ALL,
  TIER_CLEAN,
  TIER_NO_GLOB,
  isSlashSet,
  pick,
  tierOf,
} from "./step.ts";

/** A witness for the two patterns, or null when no path matches both. Both must have been
 *  compiled with the same case option. With a budget, every product state settled is charged
 *  to it, and running out throws (budgetError): a call's checks are bounded as a whole. */
export function overlap(a: CompiledGlob, b: CompiledGlob, budget?: CheckBudget): string | null {
  return decide(a, b, budget, true);
}

/** overlap() with every search run from the start, never after a forced head and with nothing
 *  remembered: what head.ts, walk.ts and below.ts must agree with (test/domain/glob/). */
export function overlapFromStart(a: CompiledGlob, b: CompiledGlob, budget?: CheckBudget): string | null {
  return decide(a, b, budget, false);
}

function decide(a: CompiledGlob, b: CompiledGlob, budget: CheckBudget | undefined, useHead: boolean): string | null {
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
  const run = (maxTier: number) => {
    const head = useHead ? forcedHead(A, B, ci, maxTier) : null;
    return head?.belowLiteral ? searchBelow(A, B, ci, maxTier, budget, head) : search(A, B, ci, maxTier, budget, head);
  };
  const first = run(TIER_ALL);
  if (first === null) return null;
  let worst = 0;
  for (let i = 0; i < first.length; i++) {
    const c = first.codePointAt(i)!;
    if (c > 0xffff) i++;
    if ((c >= 0x61 && c <= 0x7a) || c === DOT || c === SLASH) continue; // tier 0
    const t = tierOf(c);
    if (t > worst) worst = t;
  }
  if (worst <= TIER_CLEAN) return first;
  const clean = run(TIER_CLEAN);
  if (clean !== null) return clean;
  if (worst <= TIER_NO_GLOB) return first;
  return run(TIER_NO_GLOB) ?? first;
}

const BUCKETS = 4; // > the largest step cost, so a cyclic bucket queue never wraps onto itself

/** Pairs of distinct sets remembered per search (4 MB of Int32 at most); beyond that, a step
 *  intersects afresh. Only hostile patterns have that many distinct sets. */
const MEMO_LIMIT = 1 << 20;

/** Cheapest common accepted path, by a bucket-queue Dijkstra over product states; from the
 *  start, or from the queue a forced head ends with (its states charged as settled). */
function search(A: Automaton, B: Automaton, ci: boolean, maxTier: number, budget: CheckBudget | undefined, head: Head | null): string | null {
  if (head !== null) {
    if (budget && (budget.left -= head.settled) < 0) throw budgetError();
    if (head.at === null) return null;
  }
  const nB = B.size;
  const words = ((A.size * nB * 4) >>> 5) + 1;
  const settled = new Uint32Array(words);
  const queuedCheap = new Uint32Array(words); // queued by a cost-1 step: nothing later can beat it
  const queuedDear = new Uint32Array(words); // queued by a dearer step: a cheaper one may follow
  const setsA = A.sets;
  const setsB = B.sets;
  const nSetsB = setsB.length;
  const memo = setsA.length * nSetsB <= MEMO_LIMIT ? new Int32Array(setsA.length * nSetsB) : null;
  const slashA = slashFlags(setsA);
  const slashB = slashFlags(setsB);
  // One entry per push: the product state, the entry it came from, and the character taken.
  // Entry 0 is the start, or after a head the state before its last step.
  const entries = new Entries();
  const buckets: number[][] = Array.from({ length: BUCKETS }, () => []);
  let pending = 0;
  let dist = 0;
  const push = (key: number, c: number, parent: number, cost: number) => {
    const w = key >>> 5;
    const bit = 1 << (key & 31);
    if ((settled[w]! | queuedCheap[w]!) & bit) return;
    if (cost === STEP_COST) queuedCheap[w]! |= bit;
    else if (queuedDear[w]! & bit) return;
    else queuedDear[w]! |= bit;
    buckets[(dist + cost) % BUCKETS]!.push(entries.add(key, parent, c));
    pending++;
  };
  if (head === null) {
    buckets[0]!.push(0);
    pending = 1;
  } else {
    // Queued as the head's last step queued them, from entry 0 standing for the state before it.
    const chars = headChars(head);
    const last = chars[chars.length - 1]!;
    const cost = head.cheap ? STEP_COST : HIDDEN_NAME_COST;
    for (const key of headKeys(head, nB)) push(key, last, 0, cost);
    dist = cost;
  }
  const aStart = A.edgeStart;
  const aTo = A.edgeTo;
  const aSet = A.edgeSetIndex;
  const bStart = B.edgeStart;
  const bTo = B.edgeTo;
  const bSet = B.edgeSetIndex;
  while (pending > 0) {
    const bucket = buckets[dist % BUCKETS]!;
    for (let k = 0; k < bucket.length; k++) {
      const entry = bucket[k]!;
      pending--;
      const key = entries.keys[entry]!;
      const w = key >>> 5;
      const bit = 1 << (key & 31);
      if (settled[w]! & bit) continue;
      settled[w]! |= bit;
      if (budget && --budget.left < 0) throw budgetError();
      const d = key & 3;
      const pair = key >>> 2;
      const sa = (pair / nB) | 0;
      const sb = pair - sa * nB;
      if (d === SEG_NAME && A.accept[sa] && B.accept[sb]) return witness(entry, entries, head);
      for (let ea = aStart[sa]!; ea < aStart[sa + 1]!; ea++) {
        const ia = aSet[ea]!;
        const ta = aTo[ea]! * nB;
        for (let eb = bStart[sb]!; eb < bStart[sb + 1]!; eb++) {
          const ib = bSet[eb]!;
          // Every step is either exactly `/` or excludes it, so a separator needs both sides.
          if (slashA[ia]! | slashB[ib]!) {
            if (slashA[ia]! & slashB[ib]! && d === SEG_NAME) push((ta + bTo[eb]!) * 4 + SEG_START, SLASH, entry, STEP_COST);
            continue;
          }
          const m = ia * nSetsB + ib;
          let info = memo ? memo[m]! : 0;
          if (info === 0) {
            const both = intersect(setsA[ia]!, setsB[ib]!);
            info = both.length === 0 ? 1 : 1 + (has(both, DOT) ? 1 : 0) + 2 * (pick(both, maxTier, ci) + 1);
            if (memo) memo[m] = info;
          }
          if (info === 1) continue;
          const c = ((info - 1) >> 1) - 1;
          const next = ta + bTo[eb]!;
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

/** search() after a head that read a whole literal path: what is left is the same for every
 *  literal, so it is remembered where the head left the other side (below.ts). */
function searchBelow(A: Automaton, B: Automaton, ci: boolean, maxTier: number, budget: CheckBudget | undefined, head: Head): string | null {
  const read = (head.onA ? A : B).literalText;
  const hit = recall(head, maxTier);
  if (hit) {
    if (budget && (budget.left -= head.settled + hit.settled) < 0) throw budgetError();
    return hit.rest === null ? null : read + hit.rest;
  }
  const count: CheckBudget = { left: budget ? budget.left : Number.MAX_SAFE_INTEGER };
  const before = count.left;
  let found: string | null;
  try {
    found = search(A, B, ci, maxTier, count, head);
  } finally {
    if (budget) budget.left = count.left; // spent even when it ran out (and nothing is remembered)
  }
  remember(head, maxTier, { rest: found === null ? null : found.slice(read.length), settled: before - count.left - head.settled });
  return found;
}

/** The search's pushes, in typed arrays that double as they fill. */
class Entries {
  keys = new Int32Array(64);
  parents = new Int32Array(64);
  chars = new Int32Array(64);
  size = 1; // entry 0: the start

  add(key: number, parent: number, c: number): number {
    if (this.size === this.keys.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.keys = grow(this.keys);
      this.parents = grow(this.parents);
      this.chars = grow(this.chars);
    }
    const at = this.size++;
    this.keys[at] = key;
    this.parents[at] = parent;
    this.chars[at] = c;
    return at;
  }
}

function slashFlags(sets: readonly CharSet[]): Uint8Array {
  const out = new Uint8Array(sets.length);
  for (let i = 0; i < sets.length; i++) out[i] = isSlashSet(sets[i]!) ? 1 : 0;
  return out;
}

function witness(at: number, entries: Entries, head: Head | null): string {
  const out: number[] = [];
  for (let i = at; i > 0; i = entries.parents[i]!) out.push(entries.chars[i]!);
  out.reverse();
  const all = head === null ? out : [...headChars(head).slice(0, -1), ...out];
  let text = "";
  for (let i = 0; i < all.length; i += 4096) text += String.fromCodePoint(...all.slice(i, i + 4096));
  return text;
}
