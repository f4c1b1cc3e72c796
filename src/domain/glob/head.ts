// The forced head of an overlap search: a short cut that changes no answer.
//
// While one side's automaton can read only one character (a literal pattern all the way to its
// end, a glob up to its first wildcard, class or brace), every common path spells that character
// there, and the product states the search reaches after i steps differ only in the other side's
// state. So the head is walked as a list of the other side's states, in the order the search
// would queue them (settled in queue order, each one's edges in order, a state queued once), and
// the states the search would settle along it are counted; the search then starts where the head
// ends, with the very queue it would have had there. The witness, the verdict and the steps
// charged to a budget are the search's own (the oracle test and head.test.ts in test/domain/glob/
// compare the two), without the product's per-state bookkeeping: a literal path checked against a
// claim costs a run of the claim's automaton over the path (its steps remembered: walk.ts), then
// a search of what lies below it (remembered too: below.ts).
import type { Automaton } from "./automaton.ts";
import { DOT, SLASH } from "./charset.ts";
import { firstFoldedIn } from "./case-fold.ts";
import { AFTER_DOT, SEG_NAME, SEG_START, tierOf } from "./step.ts";
import { type Step, startStep, stepAfter, stepOf } from "./walk.ts";

export interface Head {
  /** The side that read one character per step, and how many it read. */
  readonly X: Automaton;
  readonly read: number;
  /** Which side X is: A (the search's outer side) or B. */
  readonly onA: boolean;
  /** Where the head ended: X's state, the other side's list of states (walk.ts; null when
   *  none is left, and no path gets that far), the segment state, and whether the last step
   *  was a cheap one (a `.` opening a segment is dearer). */
  readonly x: number;
  readonly at: Step | null;
  readonly d: number;
  readonly cheap: boolean;
  /** Product states the search settles along the head: each once, and none of them accepts. */
  readonly settled: number;
  /** X is a literal whose whole path was read: all that is left of it is its implied `/**`
   *  (below.ts). */
  readonly belowLiteral: boolean;
}

/** The characters the head read. */
export function headChars(h: Head): number[] {
  const chars: number[] = [];
  for (let s = 0; chars.length < h.read; s = h.X.edgeTo[h.X.edgeStart[s]!]!) chars.push(h.X.sets[h.X.edgeSetIndex[h.X.edgeStart[s]!]!]![0]!);
  return chars;
}

/** The product states queued after the head, in queue order, as the search's keys
 *  ((state of A × B.size + state of B) × 4 + segment state). */
export function headKeys(h: Head, nB: number): number[] {
  if (h.at === null) return [];
  return Array.from(h.at.states, (y) => (h.onA ? h.x * nB + y : y * nB + h.x) * 4 + h.d);
}

// stepRule's answer, packed: the segment state after the step, and two flags.
const TAKEN = 4;
const CHEAP = 8;

/** Whether the search takes c from segment state d, whatever the other side's state, and where
 *  that leaves the segment (overlap.ts's step for a one-character set). */
function stepRule(c: number, d: number, maxTier: number, ci: boolean): number {
  if (c === SLASH) return SEG_START | CHEAP | (d === SEG_NAME ? TAKEN : 0);
  if (c === DOT) return AFTER_DOT[d]! | TAKEN | (d !== SEG_START ? CHEAP : 0);
  // pick() of the one character
  return SEG_NAME | CHEAP | (tierOf(c) <= maxTier && (!ci || firstFoldedIn(c, c) === c) ? TAKEN : 0);
}

/** Walks the longer of A's and B's forced runs (Automaton.forced); null when neither has one. */
export function forcedHead(A: Automaton, B: Automaton, ci: boolean, maxTier: number): Head | null {
  if (A.forced === 0 && B.forced === 0) return null;
  const onA = A.forced >= B.forced;
  const X = onA ? A : B; // one character per step
  const Y = onA ? B : A; // followed as a list of states
  const steps = X.forced;
  let x = 0;
  let d = SEG_START;
  let cheap = true;
  let settled = 0;
  // While Y is in its own forced run too, its list is that one state, and a step compares the
  // two sides' characters (Y's set is that one character).
  let y = 0;
  let i = 0;
  let alive = true;
  for (const both = Math.min(steps, Y.forced); i < both && alive; i++) {
    const e = X.edgeStart[x]!;
    const ey = Y.edgeStart[y]!;
    const c = X.sets[X.edgeSetIndex[e]!]![0]!;
    settled++;
    const take = stepRule(c, d, maxTier, ci);
    d = take & 3;
    cheap = (take & CHEAP) !== 0;
    alive = (take & TAKEN) !== 0 && c === Y.sets[Y.edgeSetIndex[ey]!]![0]!;
    x = X.edgeTo[e]!;
    y = Y.edgeTo[ey]!;
  }
  let at: Step | null = !alive ? null : i === 0 ? startStep(Y) : stepOf(Y, y);
  for (; i < steps && at !== null; i++) {
    const e = X.edgeStart[x]!;
    const c = X.sets[X.edgeSetIndex[e]!]![0]!;
    settled += at.states.length;
    const take = stepRule(c, d, maxTier, ci);
    d = take & 3;
    cheap = (take & CHEAP) !== 0;
    at = (take & TAKEN) !== 0 ? stepAfter(Y, at, c) : null;
    x = X.edgeTo[e]!;
  }
  return { X, read: i, onA, x, at, d, cheap, settled, belowLiteral: at !== null && x === X.literalEnd };
}
