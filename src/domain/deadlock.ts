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

/** What an agent can stand in line for. */
export type WaitKind = "lock" | "slot" | "path";

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

/** A cycle that is not a deadlock yet: it becomes one when the agents between calls block again. */
export interface WouldDeadlock {
  cycle: CycleStep[];
  /** The agents in the cycle whose wait is kept between calls (not blocked now), in cycle order. */
  betweenCalls: string[];
}

/**
 * How every screen names a cycle that is not a deadlock yet ("cycle that would deadlock if a
 * blocks", "... if a and b block"): `airlock status` and the dashboard say it in these words.
 * Pure, with no imports, so the dashboard's bundle can take it.
 */
export function wouldDeadlockLabel(betweenCalls: readonly string[]): string {
  const who = betweenCalls.length <= 1 ? (betweenCalls[0] ?? "") : `${betweenCalls.slice(0, -1).join(", ")} and ${betweenCalls.at(-1)}`;
  return `cycle that would deadlock if ${who} ${betweenCalls.length === 1 ? "blocks" : "block"}`;
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

  /**
   * Every wait, and each distinct cycle among them, of two kinds:
   * - deadlocks, in the one meaning the daemon acts on: agents that are stuck, each of whose
   *   blocked calls waits on someone stuck (detect() for every blocked call of the agent finds
   *   a cycle). Every agent in such a cycle is blocked right now.
   * - cycles that would deadlock once the agents between calls (their wait timed out and they
   *   keep their place with a wake_token) block again: then the last of them to block is
   *   answered with the cycle. Until then the daemon answers nobody, because such an agent may
   *   let go of what it holds. betweenCalls names them, and the cycle starts with the first.
   * A cycle of blocked calls through an agent that has another blocked call able to progress is
   * neither (that agent may still let go): the exotic case the next closing call catches.
   */
  *view(): Tx<{ waits: Wait[]; deadlocks: Deadlock[]; wouldDeadlock: WouldDeadlock[] }> {
    const waits: Wait[] = [];
    for (const s of this.sources) waits.push(...(yield* s.allWaits()));
    const seen = new Set<string>();
    const fresh = (cycle: CycleStep[]) => {
      const key = cycle
        .map((s) => s.agent_id)
        .sort()
        .join("\u0000");
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    };

    const deadlocks: Deadlock[] = [];
    const blockedBy = new Map<string, Wait[]>();
    for (const w of waits) if (w.blocked) blockedBy.set(w.agentId, [...(blockedBy.get(w.agentId) ?? []), w]);
    for (const mine of blockedBy.values()) {
      const found: Deadlock[] = [];
      for (const w of mine) {
        const d = yield* this.detect(w);
        if (!d) break;
        found.push(d);
      }
      if (found.length === mine.length && fresh(found[0]!.cycle)) deadlocks.push(found[0]!);
    }

    // A step is blocked when one of its agent's blocked calls waits along it.
    const blockedStep = (s: CycleStep) =>
      waits.some((w) => w.blocked && w.agentId === s.agent_id && w.edges.some((e) => e.waitsFor === s.waits_for && e.resource === s.resource));
    const wouldDeadlock: WouldDeadlock[] = [];
    for (const w of waits) {
      const d = yield* this.detect(w, { includeDetached: true });
      if (!d) continue;
      const away = d.cycle.filter((s) => !blockedStep(s)).map((s) => s.agent_id);
      if (away.length === 0 || !fresh(d.cycle)) continue;
      const first = d.cycle.findIndex((s) => s.agent_id === away[0]);
      wouldDeadlock.push({ cycle: [...d.cycle.slice(first), ...d.cycle.slice(0, first)], betweenCalls: [...new Set(away)] });
    }
    return { waits, deadlocks, wouldDeadlock };
  }
}
