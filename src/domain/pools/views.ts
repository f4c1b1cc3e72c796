// What the pools show: a pool's view (list_pools, status), a refusal (a queued acquire_slot's
// answer), holders and queued requests, and a request's edges in the wait-for graph. Reads
// only: nothing here changes a row or a line.
import { all, get, type Tx } from "../../store/tx.ts";
import { secondsSince } from "../context.ts";
import type { Wait } from "../deadlock.ts";
import type { WaitQueue } from "../wait.ts";
import { isBlocked } from "../waiter.ts";
import type { Holder, PoolRow, PoolView, Queued, SlotGrant, SlotRefusal, SlotRow, SlotWait, SlotWaiter } from "./types.ts";

type Line = WaitQueue<SlotWait, SlotGrant>;

export function* poolView(p: PoolRow, waits: Line, now: number): Tx<PoolView> {
  const line = waits.line(p.name);
  return {
    pool: p.name,
    capacity: p.capacity,
    inUse: yield* held(p.name),
    offered: line.filter((w) => w.req.state === "offered").reduce((n, w) => n + w.req.weight, 0),
    queued: line.filter((w) => w.req.state !== "paused").length,
    version: p.version,
    offerSeconds: p.offer_seconds,
    holders: yield* holders(p.name, now),
    waiters: line.map((w) => queuedView(w, now)),
  };
}

export function* refusal(w: SlotWaiter, pool: PoolRow, waits: Line, now: number): Tx<SlotRefusal> {
  const active = activeLine(waits, w.key);
  // A paused request is out of line until it calls again; then it rejoins at the tail.
  const i = w.req.state === "paused" ? active.length : active.indexOf(w);
  return {
    granted: false,
    pool: pool.name,
    capacity: pool.capacity,
    inUse: yield* held(pool.name),
    position: i + 1,
    wakeToken: w.token,
    holders: yield* holders(pool.name, now),
    ahead: active.slice(0, Math.max(0, i)).map((x) => queuedView(x, now)),
  };
}

/**
 * A queued request waits for any holder to release or any request ahead to move on (ANY: one
 * may be enough). An offered or paused request waits for nobody: it can take its turn, or it
 * is out of line until it calls again.
 */
export function* waitOf(w: SlotWaiter, waits: Line): Tx<Wait | null> {
  if (w.req.state !== "queued") return null;
  const holders = yield* all<{ agent_id: string }>("SELECT agent_id FROM slots WHERE pool = ? ORDER BY acquired_at, rowid", w.key);
  const line = activeLine(waits, w.key);
  const ahead = line.slice(0, Math.max(0, line.indexOf(w)));
  const edges = [...holders.map((h) => h.agent_id), ...ahead.map((x) => x.agentId!)].map((id) => ({ resource: w.key, waitsFor: id }));
  return { agentId: w.agentId!, kind: "slot", resource: w.key, any: true, blocked: isBlocked(w), edges };
}

export function* holders(poolName: string, now: number): Tx<Holder[]> {
  const slots = yield* all<SlotRow>("SELECT * FROM slots WHERE pool = ? ORDER BY acquired_at, rowid", poolName);
  return slots.map((s) => {
    const h: Holder = { agentId: s.agent_id, reason: s.reason, weight: s.weight, heldSeconds: secondsSince(s.acquired_at, now) };
    if (s.pid !== null) h.pid = s.pid;
    return h;
  });
}

/** The requests in line that are not paused, earliest first. */
export function activeLine(waits: Line, poolName: string): SlotWaiter[] {
  return waits.line(poolName).filter((w) => w.req.state !== "paused");
}

/** The weight the pool's holders hold. */
export function* held(poolName: string): Tx<number> {
  return (yield* get<{ n: number | null }>("SELECT SUM(weight) AS n FROM slots WHERE pool = ?", poolName))?.n ?? 0;
}

export function queuedView(w: SlotWaiter, now: number): Queued {
  const q: Queued = {
    agentId: w.agentId!,
    token: w.token,
    reason: w.req.reason,
    weight: w.req.weight,
    waitingSeconds: secondsSince(w.since, now),
    state: w.req.state,
    blocked: w.attached,
  };
  if (w.req.offerExpiresAt !== null) q.offerExpiresAt = w.req.offerExpiresAt;
  return q;
}
