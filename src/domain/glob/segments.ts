// How many `/` a path matched by a pattern can contain: the fewest and the most (Infinity when
// a `**` or a literal's implied `/**` lets it go on). Two patterns whose ranges do not meet
// cannot match a common path, and that is decided in a few comparisons: a claim such as
// `*/fixtures/*` (exactly two separators) is ruled out against `pkg/src/mod/index.ts` without
// a product search. The ranges are exact properties of the automaton, so the short cut is too.
import type { Automaton } from "./automaton.ts";
import { SLASH } from "./charset.ts";

export interface SlashRange {
  min: number;
  max: number;
}

const ranges = new WeakMap<Automaton, SlashRange>();

export function slashRange(a: Automaton): SlashRange {
  let r = ranges.get(a);
  if (!r) ranges.set(a, (r = compute(a)));
  return r;
}

function isSlash(a: Automaton, e: number): boolean {
  const s = a.sets[a.edgeSetIndex[e]!]!;
  return s.length === 2 && s[0] === SLASH && s[1] === SLASH;
}

function compute(a: Automaton): SlashRange {
  return { min: fewest(a), max: most(a) };
}

/** 0-1 breadth-first search: a `/` edge costs 1, any other 0. */
function fewest(a: Automaton): number {
  const dist = new Int32Array(a.size).fill(-1);
  let best = Number.POSITIVE_INFINITY;
  // Level by level: a level is every state reached with d separators; 0-cost edges extend it.
  let frontier = [0];
  for (let d = 0; frontier.length > 0; d++) {
    const next: number[] = [];
    for (let i = 0; i < frontier.length; i++) {
      const s = frontier[i]!;
      if (dist[s] !== -1) continue;
      dist[s] = d;
      if (a.accept[s]) best = Math.min(best, d);
      for (let e = a.edgeStart[s]!; e < a.edgeStart[s + 1]!; e++) {
        const t = a.edgeTo[e]!;
        if (dist[t] !== -1) continue;
        if (isSlash(a, e)) next.push(t);
        else frontier.push(t);
      }
    }
    if (best !== Number.POSITIVE_INFINITY) return best;
    frontier = next;
  }
  return best;
}

/**
 * The longest count of `/` edges on a path from the start to an accepting state: Infinity when
 * a cycle holds a `/` edge (every state of the trimmed automaton reaches a match), else the
 * longest path over the strongly connected components, which form a DAG.
 */
function most(a: Automaton): number {
  const n = a.size;
  // Tarjan's algorithm, iterative. Components come out in reverse topological order: a
  // component is emitted after every component reachable from it.
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const comp = new Int32Array(n).fill(-1);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const longest: number[] = [];
  let counter = 0;
  let comps = 0;
  const call: { s: number; e: number }[] = [];
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    call.push({ s: root, e: a.edgeStart[root]! });
    index[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    while (call.length > 0) {
      const top = call[call.length - 1]!;
      const s = top.s;
      if (top.e < a.edgeStart[s + 1]!) {
        const t = a.edgeTo[top.e++]!;
        if (index[t] === -1) {
          index[t] = low[t] = counter++;
          stack.push(t);
          onStack[t] = 1;
          call.push({ s: t, e: a.edgeStart[t]! });
        } else if (onStack[t]) {
          low[s] = Math.min(low[s]!, index[t]!);
        }
        continue;
      }
      call.pop();
      if (call.length > 0) {
        const parent = call[call.length - 1]!.s;
        low[parent] = Math.min(low[parent]!, low[s]!);
      }
      if (low[s] !== index[s]) continue;
      // s is the root of a component: pop it, then its longest path from its members' edges.
      const members: number[] = [];
      let m: number;
      do {
        m = stack.pop()!;
        onStack[m] = 0;
        comp[m] = comps;
        members.push(m);
      } while (m !== s);
      let best = members.some((x) => a.accept[x]) ? 0 : Number.NEGATIVE_INFINITY;
      for (const x of members) {
        for (let e = a.edgeStart[x]!; e < a.edgeStart[x + 1]!; e++) {
          const t = a.edgeTo[e]!;
          const w = isSlash(a, e) ? 1 : 0;
          if (comp[t] === comps) {
            if (w > 0) best = Number.POSITIVE_INFINITY; // a `/` on a cycle
          } else {
            best = Math.max(best, w + longest[comp[t]!]!);
          }
        }
      }
      longest.push(best);
      comps++;
    }
  }
  return Math.max(0, longest[comp[0]!]!);
}
