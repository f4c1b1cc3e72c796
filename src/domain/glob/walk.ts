// One side's states along a forced head, step by step, remembered per automaton.
//
// Along a head (head.ts) the other side is followed as a list of its states in queue order, and
// the list after a character is a function of the list before and the character alone. A claim
// is met by many literal paths that walk it the same way (every file under `services/svc7/`
// leaves `services/svc7/**/*.gen0.ts` in the same few lists of its `**` states), so each list's
// successors are kept: a step the table has seen is one lookup instead of a pass over every
// state's edges. A lazy subset construction, bounded per automaton; past the bound a step is
// computed afresh and not kept. A pure function's memo, shared by every kernel.
import type { Automaton } from "./automaton.ts";
import { SLASH, has } from "./charset.ts";
import { isSlashSet } from "./step.ts";

/** Lists and steps remembered per automaton. A claim meets paths in a few places, each a few
 *  states wide, and real paths use a few dozen characters; hostile patterns stop being remembered
 *  rather than grow the table. Each list also keeps at most 48 answers of below.ts (2 sides x 3
 *  tier limits x 4 segment states x 2 costs), so an automaton's memo stays within tens of KB,
 *  the order of its own arrays. */
export const WALK_LISTS = 64;
export const WALK_STEPS = 256;

export interface Step {
  /** The automaton's states, in queue order. */
  readonly states: Int32Array;
  /** What each character read next leads to (null: no state left). */
  readonly next: Map<number, Step | null>;
  /** When a literal's whole path led here: what lies below it, by belowKey (below.ts). */
  readonly below: Map<number, Below>;
}

/** The rest of a search after a literal's whole path (below.ts). */
export interface Below {
  /** The witness after the literal's path, or null: no common path. */
  readonly rest: string | null;
  /** States the search settled after the head. */
  readonly settled: number;
}

interface Table {
  readonly start: Step;
  readonly lists: Map<string, Step>;
  steps: number;
}

const tables = new WeakMap<Automaton, Table>();

function tableOf(a: Automaton): Table {
  let t = tables.get(a);
  if (!t) {
    const start: Step = { states: Int32Array.of(0), next: new Map(), below: new Map() };
    tables.set(a, (t = { start, lists: new Map([["0", start]]), steps: 0 }));
  }
  return t;
}

/** The list holding only the start state. */
export function startStep(a: Automaton): Step {
  return tableOf(a).start;
}

/** The list holding only state s (where the automaton's own forced run left it). */
export function stepOf(a: Automaton, s: number): Step {
  const t = tableOf(a);
  const key = String(s);
  const known = t.lists.get(key);
  if (known) return known;
  const step: Step = { states: Int32Array.of(s), next: new Map(), below: new Map() };
  if (t.lists.size < WALK_LISTS) t.lists.set(key, step);
  return step;
}

/** The states reached from `from` by reading c, each once, in the order the search queues them:
 *  each state of `from` in order, its edges in order. A separator needs a `/` edge; any other
 *  character, a set holding it (every set is exactly `/` or excludes it). */
export function stepAfter(a: Automaton, from: Step, c: number): Step | null {
  const known = from.next.get(c);
  if (known !== undefined) return known;
  const seen = new Uint8Array(a.size);
  const out: number[] = [];
  for (const s of from.states) {
    for (let e = a.edgeStart[s]!; e < a.edgeStart[s + 1]!; e++) {
      const set = a.sets[a.edgeSetIndex[e]!]!;
      if (c === SLASH ? !isSlashSet(set) : isSlashSet(set) || !has(set, c)) continue;
      const t = a.edgeTo[e]!;
      if (seen[t]) continue;
      seen[t] = 1;
      out.push(t);
    }
  }
  const t = tableOf(a);
  let step: Step | null = null;
  if (out.length > 0) {
    const key = out.join(",");
    step = t.lists.get(key) ?? { states: Int32Array.from(out), next: new Map(), below: new Map() };
    if (!t.lists.has(key) && t.lists.size < WALK_LISTS) t.lists.set(key, step);
  }
  if (t.steps < WALK_STEPS) {
    from.next.set(c, step);
    t.steps++;
  }
  return step;
}
