// What lies below a literal path, remembered where the literal left the claim.
//
// Once a literal path has been read (head.ts), all that is left of its automaton is its implied
// `/**`, which has the same shape for every literal (automaton.ts checks it: literalEnd). So the
// rest of the search, the shortest way on from there to a path the claim also matches, depends
// only on the claim's automaton and on where the head left it (its list of states, which walk.ts
// keeps one object per list for; the segment state; which side is which; the characters
// allowed), not on which literal it was: every file checked inside `services/svc7/` against
// `services/svc7/**/*.gen0.ts` asks the same question there. Its answer (the rest of the witness,
// or none) and the states it settled are kept on that list (at most 48 keys: walk.ts), and a
// hit charges those states to the budget again, so a call is refused exactly when it would have
// been.
import type { Head } from "./head.ts";
import type { Below } from "./walk.ts";

function belowKey(head: Head, maxTier: number): number {
  return (((head.onA ? 1 : 0) * 8 + maxTier) * 4 + head.d) * 2 + (head.cheap ? 1 : 0);
}

export function recall(head: Head, maxTier: number): Below | undefined {
  return head.at?.below.get(belowKey(head, maxTier));
}

export function remember(head: Head, maxTier: number, below: Below): void {
  head.at?.below.set(belowKey(head, maxTier), below);
}
