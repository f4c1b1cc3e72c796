// The wait-for graph across every primitive an agent can stand in line for: locks, lock
// groups, slots and path claims. Each primitive describes its own waiters as `Wait`s (who is in
// their way, for which resource); this module only reasons about the graph, once.
//
// A wait is AND (a lock group, a path claim: every blocker must let go) or ANY (a slot: one
// holder's release may be enough). An agent is *stuck* when every call it has blocked right now
// waits on someone stuck; detection asks whether the caller about to block would be stuck,
// assuming itself stuck. Unknowns count as progress (an agent in the middle of being examined,
// a pool with an offer out, an agent whose only waits are between calls), so the answer errs
// towards "no deadlock": a reported cycle is real, some exotic ones are only found by the next
// call that closes them. Self-waits (an agent in line behind its own lock) are not cycles: the
// lease ends them, and a restarted agent legitimately waits out its predecessor's lease.
import type { Tx } from "../store/tx.ts";
import type { WaitKind } from "./snapshot.ts";

export interface WaitEdge {
  resource: string;
  waitsFor: string;
}

export interface Wait {
  agentId: string;
  kind: WaitKind;
  /** What it asked for: the lock names (a group's joined by " + "), the pool, the room. */
  resource: string;
  /** ANY: released by any one blocker (a pool); otherwise it needs every blocker gone. */
  any: boolean;
  /** The call is blocked right now (attached), rather than keeping its place between calls. */
  blocked: boolean;
  edges: WaitEdge[];
}

export interface CycleStep {
  agent_id: string;
  waits_for: string;
  resource: string;
}

export interface Deadlock {
  cycle: CycleStep[];
}

/** What a primitive tells the graph: the waits of one agent (only its blocked calls' unless asked), or of everyone. */
export interface WaitSource {
  waitsOf(agentId: string, includeDetached: boolean): Tx<Wait[]>;
  allWaits(): Tx<Wait[]>;
}


export class WaitGraph {
  private readonly sources: WaitSource[] = [];

  register(s: WaitSource): void {
    this.sources.push(s);
  }

  /**
   * The cycle `mine` would close if its agent blocked on it now, or null. Call it inside the
   * transaction that is about to block the caller, after it has worked out its blockers.
   */
  *detect(mine: Wait, o: { includeDetached?: boolean } = {}): Tx<Deadlock | null> {
    const self = mine.agentId;
    const next = new Map<string, WaitEdge>();
    const verdict = new Map<string, boolean>();
    const sources = this.sources;

    function* waitsOf(id: string): Tx<Wait[]> {
      const out: Wait[] = [];
      for (const s of sources) out.push(...(yield* s.waitsOf(id, o.includeDetached === true)));
      return out;
    }
    function* stuckEdge(w: Wait): Tx<WaitEdge | null> {
      const edges = w.edges.filter((e) => e.waitsFor !== w.agentId);
      if (edges.length === 0) return null;
      if (w.any) {
        for (const e of edges) if (!(yield* stuck(e.waitsFor))) return null;
        return edges[0]!;
      }
      for (const e of edges) if (yield* stuck(e.waitsFor)) return e;
      return null;
    }
    function* stuck(id: string): Tx<boolean> {
      if (id === self) return true;
      const known = verdict.get(id);
      if (known !== undefined) return known;
      verdict.set(id, false); // in progress: counts as progress until proven stuck
      const waits = yield* waitsOf(id);
      let via: WaitEdge | null = null;
      for (const w of waits) {
        const e = yield* stuckEdge(w);
        if (!e) return false;
        via ??= e;
      }
      if (!via) return false;
      verdict.set(id, true);
      next.set(id, via);
      return true;
    }

    const first = yield* stuckEdge(mine);
    if (!first) return null;
    const cycle: CycleStep[] = [{ agent_id: self, waits_for: first.waitsFor, resource: first.resource }];
    for (let id = first.waitsFor; id !== self && cycle.length <= next.size + 1; ) {
      const e = next.get(id)!;
      cycle.push({ agent_id: id, waits_for: e.waitsFor, resource: e.resource });
      id = e.waitsFor;
    }
    return { cycle };
  }

  /** Every wait, and each distinct cycle among them (blocked calls and kept places alike). */
  *view(): Tx<{ waits: Wait[]; cycles: CycleStep[][] }> {
    const waits: Wait[] = [];
    for (const s of this.sources) waits.push(...(yield* s.allWaits()));
    const cycles: CycleStep[][] = [];
    const seen = new Set<string>();
    for (const w of waits) {
      const d = yield* this.detect(w, { includeDetached: true });
      if (!d) continue;
      const key = d.cycle
        .map((s) => s.agent_id)
        .sort()
        .join("\u0000");
      if (seen.has(key)) continue;
      seen.add(key);
      cycles.push(d.cycle);
    }
    return { waits, cycles };
  }
}
