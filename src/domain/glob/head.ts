// The forced head of an overlap search: a short cut that changes no answer.
//
// While one side's automaton can read only one character (a literal pattern all the way to its
// end, a glob up to its first wildcard, class or brace), every common path spells that character
// there, and the product states the search reaches after i steps differ only in the other side's
// state. So the head is walked as a list of the other side's states, in the order the search
// would queue them (settled in queue order, each one's edges in order, a state queued once), and
// the states the search would settle along it are counted; the search then starts where the head
// ends, with the very queue it would have had there. The witness, the verdict and the steps
// charged to a budget are the search's own (test/domain/glob/head.test.ts compares the two on the
// oracle's pairs), without the product's per-state bookkeeping: a literal path checked against a
// claim costs a run of the claim's automaton over the path, then a search of what lies below it.
import type { Automaton } from "./automaton.ts";
import { DOT, SLASH, has } from "./charset.ts";
import { firstFoldedIn } from "./case-fold.ts";
import { AFTER_DOT, SEG_NAME, SEG_START, isSlashSet, tierOf } from "./step.ts";

export interface Head {
  /** The characters read, one per step. */
  readonly chars: readonly number[];
  /** The product states queued after the last step, in queue order, as the search's keys
   *  ((state of A × B.size + state of B) × 4 + segment state); empty when no path gets that far. */
  readonly keys: readonly number[];
  /** Whether the last step was a cheap one (a `.` opening a segment is dearer). */
  readonly cheap: boolean;
  /** Product states the search settles along the head: each once, and none of them accepts. */
  readonly settled: number;
  /** Where the head ended: the other side's states in queue order, the segment state, and which
   *  side read the head; `belowLiteral` when that side is a literal whose whole path was read, so
   *  that all that is left of it is its implied `/**` (below.ts). */
  readonly ys: readonly number[];
  readonly d: number;
  readonly onA: boolean;
  readonly belowLiteral: boolean;
}

/** Walks the longer of A's and B's forced runs (Automaton.forced); null when neither has one. */
export function forcedHead(A: Automaton, B: Automaton, ci: boolean, maxTier: number): Head | null {
  if (A.forced === 0 && B.forced === 0) return null;
  const onA = A.forced >= B.forced;
  const X = onA ? A : B; // one character per step
  const Y = onA ? B : A; // followed as a list of states
  const steps = X.forced;
  // The states after step i, in queue order: two buffers, swapped; seen[t] is the last step
  // that queued t (stamps start at 1, so a fresh array means nothing queued).
  let ys = new Int32Array(Y.size);
  let next = new Int32Array(Y.size);
  const seen = new Int32Array(Y.size);
  let count = 1;
  let x = 0;
  let d = SEG_START;
  let cheap = true;
  let settled = 0;
  const chars: number[] = [];
  const yStart = Y.edgeStart;
  const yTo = Y.edgeTo;
  const ySet = Y.edgeSetIndex;
  const ySets = Y.sets;
  for (let i = 1; i <= steps && count > 0; i++) {
    const e = X.edgeStart[x]!;
    const set = X.sets[X.edgeSetIndex[e]!]!;
    const c = set[0]!;
    settled += count;
    // Whether the search takes c from this segment state, whatever Y's state (overlap.ts's step).
    let ok = true;
    if (c === SLASH) {
      ok = d === SEG_NAME;
      d = SEG_START;
      cheap = true;
    } else if (c === DOT) {
      cheap = d !== SEG_START;
      d = AFTER_DOT[d]!;
    } else {
      ok = tierOf(c) <= maxTier && (!ci || firstFoldedIn(c, c) === c); // pick() of the one character
      d = SEG_NAME;
      cheap = true;
    }
    let n = 0;
    if (ok) {
      for (let k = 0; k < count; k++) {
        const y = ys[k]!;
        for (let ey = yStart[y]!, end = yStart[y + 1]!; ey < end; ey++) {
          const s = ySets[ySet[ey]!]!;
          // A separator needs `/` on both sides; any other character, a set holding it.
          if (c === SLASH ? !isSlashSet(s) : isSlashSet(s) || !has(s, c)) continue;
          const t = yTo[ey]!;
          if (seen[t] === i) continue;
          seen[t] = i;
          next[n++] = t;
        }
      }
    }
    chars.push(c);
    x = X.edgeTo[e]!;
    const was = ys;
    ys = next;
    next = was;
    count = n;
  }
  const nB = B.size;
  const keys: number[] = [];
  const after: number[] = [];
  for (let k = 0; k < count; k++) {
    after.push(ys[k]!);
    keys.push((onA ? x * nB + ys[k]! : ys[k]! * nB + x) * 4 + d);
  }
  return { chars, keys, cheap, settled, ys: after, d, onA, belowLiteral: count > 0 && x === X.literalEnd };
}
