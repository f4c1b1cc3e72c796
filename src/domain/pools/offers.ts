// The pools' offer policy, on the one waiter mechanism: when capacity frees, the earliest
// request gets it — at once if its call is blocked right now, else as an *offer* reserved for
// the pool's offer_seconds, claimed by its next call. An offer not claimed in time passes on
// and the absent request is *paused* (skipped) until it calls again, which puts it back in
// line at the tail. A request that does not fit blocks the ones behind it (no overtaking at
// the head). Invariant: held + offered ≤ capacity (held may exceed a lowered capacity).
import type { Tx } from "../../store/tx.ts";
import type { Ctx } from "../context.ts";
import type { WaitQueue } from "../wait.ts";
import { isBlocked } from "../waiter.ts";
import type { PoolRow, SlotGrant, SlotWait, SlotWaiter, Want } from "./types.ts";
import { activeLine, held } from "./views.ts";

/** What the policy needs of the pools' core. */
export interface OfferHost {
  /** A pool's row (cached), or null. */
  find(name: string): Tx<PoolRow | null>;
  /** A pool's row; throws for an unknown pool. */
  pool(name: string): Tx<PoolRow>;
  record(kind: string, w: SlotWaiter, reason: string | null, more?: Record<string, unknown>): Tx<void>;
  /** Turns a request into a held slot (byQueue: its blocked call is answered by the wait queue's grant). */
  grantRequest(w: SlotWaiter, want: Want, byQueue?: boolean): Tx<SlotGrant>;
}

export class Offers {
  constructor(
    private readonly c: Ctx,
    private readonly waits: WaitQueue<SlotWait, SlotGrant>,
    private readonly host: OfferHost,
  ) {}

  /** Hands free capacity to the line, earliest first: a blocked call is granted, an absent one offered. */
  *serve(poolName: string): Tx<void> {
    if (this.waits.line(poolName).length === 0) return; // nobody to serve: the common release
    const pool = yield* this.host.find(poolName);
    if (!pool) return;
    let free = yield* this.free(pool);
    for (const w of activeLine(this.waits, poolName)) {
      if (free <= 0) break;
      if (w.req.state !== "queued") continue; // an offer already holds its share
      if (w.req.weight > pool.capacity) continue; // can never fit (capacity was lowered): it blocks nobody
      if (w.req.weight > free) break; // a heavier request at the head is not overtaken
      free -= w.req.weight;
      if (isBlocked(w)) {
        const g = yield* this.host.grantRequest(w, w.req, true);
        this.waits.grant(w, g);
      } else {
        yield* this.offer(w, pool);
      }
    }
  }

  /** Capacity neither held nor offered. */
  *free(pool: PoolRow): Tx<number> {
    const offered = this.waits.line(pool.name).reduce((n, w) => n + (w.req.state === "offered" ? w.req.weight : 0), 0);
    return pool.capacity - (yield* held(pool.name)) - offered;
  }

  /** An offer's deadline, armed (again: on a shared store every daemon arms it). */
  arm(w: SlotWaiter): void {
    this.c.scheduler.at(`slot-offer:${w.token}`, w.req.offerExpiresAt!, () => this.lapsed(w));
  }

  /** The request leaves the line: its offer's deadline goes with it. */
  cancel(w: SlotWaiter): void {
    this.c.scheduler.cancel(`slot-offer:${w.token}`);
  }

  /** After capacity is lowered, offers beyond what is free go back to waiting (at their place). */
  *withdrawExcess(poolName: string): Tx<void> {
    const pool = yield* this.host.pool(poolName);
    const offered = activeLine(this.waits, poolName).filter((w) => w.req.state === "offered");
    let over = (yield* held(poolName)) + offered.reduce((n, w) => n + w.req.weight, 0) - pool.capacity;
    for (const w of offered.reverse()) {
      if (over <= 0) break;
      over -= w.req.weight;
      this.unoffer(w);
    }
  }

  private *offer(w: SlotWaiter, pool: PoolRow): Tx<void> {
    w.req.state = "offered";
    w.req.offerExpiresAt = this.c.clock.now() + pool.offer_seconds * 1000;
    this.waits.touch(w);
    this.waits.keep(w);
    yield* this.host.record("pool.offered", w, w.req.reason, { offer_seconds: pool.offer_seconds });
    this.arm(w);
  }

  /** An offer not claimed in time: the request is paused and the line served again. */
  private *lapsed(w: SlotWaiter): Tx<void> {
    if (this.waits.find(w.token, w.key) !== w || w.req.state !== "offered") return;
    w.req.state = "paused";
    w.req.offerExpiresAt = null;
    this.waits.touch(w);
    yield* this.host.record("pool.offer_expired", w, "the offer was not claimed in time");
    yield* this.host.record("pool.paused", w, "skipped until it calls again, then it rejoins at the tail");
    yield* this.serve(w.key);
  }

  /** An offer goes back to waiting, at its place in line. */
  private unoffer(w: SlotWaiter): void {
    w.req.state = "queued";
    w.req.offerExpiresAt = null;
    this.cancel(w);
    this.waits.touch(w);
  }
}
