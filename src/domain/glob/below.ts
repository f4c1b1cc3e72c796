// What lies below a literal path, remembered per claim.
//
// Once a literal path has been read (head.ts), all that is left of its automaton is its implied
// `/**`, which has the same shape for every literal (automaton.ts checks it: literalEnd). So the
// rest of the search, the shortest way on from there to a path the claim also matches, depends
// only on the claim's automaton and on where the head left it (its states in queue order, the
// segment state, which side is which, the characters allowed), not on which literal it was:
// every file checked inside `services/svc7/` against `services/svc7/**/*.gen0.ts` asks the same
// question there. Its answer (the rest of the witness, or none) and the states it settled are
// kept per claim automaton, and a hit charges those states to the budget again, so a call is
// refused exactly when it would have been. A pure function's memo, shared by every kernel.
import type { Automaton } from "./automaton.ts";
import type { Head } from "./head.ts";

/** Entries kept per automaton: a claim is met by literal paths in a few places (inside its
 *  directory, beside it, in its wildcard's segments), each leaving it in one list of states. */
export const BELOW_MEMO_SIZE = 32;

export interface Below {
  /** The witness after the literal's path, or null: no common path. */
  readonly rest: string | null;
  /** States the search settled after the head. */
  readonly settled: number;
}

const memo = new WeakMap<Automaton, Map<string, Below>>();

export function belowKey(head: Head, maxTier: number): string {
  return `${head.onA ? "a" : "b"}${maxTier}.${head.d}${head.cheap ? "c" : "d"}:${head.ys.join(",")}`;
}

export function recall(other: Automaton, key: string): Below | undefined {
  const m = memo.get(other);
  const hit = m?.get(key);
  if (m && hit) {
    m.delete(key); // re-inserted as the most recently used
    m.set(key, hit);
  }
  return hit;
}

export function remember(other: Automaton, key: string, below: Below): void {
  let m = memo.get(other);
  if (!m) memo.set(other, (m = new Map()));
  m.set(key, below);
  if (m.size > BELOW_MEMO_SIZE) m.delete(m.keys().next().value!);
}
