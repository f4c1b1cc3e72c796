// The one expiry scheduler. Every deadline in Airlock (lock TTLs, heartbeats, task leases,
// note expiry, a blocked call's wait, a detached waiter's grace) is an entry here, keyed so
// that a renewal replaces it and a release cancels it. A single underlying timer is armed at
// the earliest deadline and re-armed whenever that changes: no polling sweep, so an expiry
// fires at its exact millisecond rather than on the next tick of a loop.
import type { Awaitable } from "../store/store.ts";
import { get, type Tx } from "../store/tx.ts";
import { mark, TRACING } from "../trace.ts";
import type { Clock, TimerHandle } from "./clock.ts";

// setTimeout keeps delays in a signed 32-bit int; anything longer is re-armed on firing.
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** What an entry runs when due: a transaction body (or, for a pure in-memory deadline, nothing to yield). */
export type Due = () => Tx<void> | void;

interface Entry {
  key: string;
  at: number;
  seq: number;
  fn: Due;
  live: boolean;
  /** What an atOutside entry starts, outside any transaction (then fn is nothing): never makes a call, or the timer, open one. */
  outside: (() => void) | null;
  /** An entry armed from rows another daemon wrote (at's `look`): the row's deadline now, read in the shared order. */
  look: Look | null;
  /** An entry found still due by its look, waiting its turn among the daemons (Scheduler's `overdue`): when it looks again. */
  lookAt: number;
}

/**
 * A row's deadline as it stands (null: nothing to expire any more), read beside every daemon's
 * row bodies. At or before now: the entry's fn runs in the global order; later: it is armed
 * again at that deadline, as another daemon's (so a mirror that keeps the deadline in memory
 * must answer its old one instead, for fn to take the new one in).
 */
export type Look = () => Tx<number | null>;

/** A Look that reads one row's deadline: `sql` selects it as `at` (no row, or a null: nothing to expire). */
export function deadlineOf(sql: string, ...args: (string | number)[]): Look {
  return function* () {
    return (yield* get<{ at: number | null }>(sql, ...args))?.at ?? null;
  };
}

/**
 * How long after a deadline armed from another daemon's rows this daemon's timer first looks
 * (docs/cluster.md, "An expiry on every daemon"): the daemon that wrote the row fires at the
 * deadline, and is given this long to have done so.
 */
export const OTHERS_GRACE_MS = 2_000;

/**
 * A deadline still due at its look (the daemon that set it is slow or gone): the daemon whose
 * turn is first fires it at once, the one whose turn is n looks again n × this later, and
 * fires it only if it is still due then (docs/cluster.md, "An expiry on every daemon").
 */
export const TURN_STEP_MS = 1_000;

export class Scheduler {
  private readonly entries = new Map<string, Entry>();
  /** The entries that fire at their deadline (atOutside's too). */
  private readonly heap = new Heap();
  /** The entries armed from another daemon's rows: the timer looks at them OTHERS_GRACE_MS after their deadline. */
  private readonly later = new Heap();
  /** Those found still due by their look, waiting this daemon's turn to look again (ordered by lookAt; all are due). */
  private readonly overdue = new Heap((e) => e.lookAt);
  private seq = 0;
  private timer: TimerHandle | null = null;
  private armedAt = Number.POSITIVE_INFINITY;
  private stopped = false;

  /**
   * @param runBatch runs the processing of due entries (a transaction body) in one
   *   transaction; a store that answers after a round trip returns a promise.
   * @param lookBatch on a shared store, runs a read in the shared order (beside every daemon's
   *   row bodies): the looks of entries armed from other daemons' rows. Without it (SQLite, one
   *   daemon) a look is never taken and every entry fires at its deadline.
   * @param turn this daemon's turn among the live daemons for a key (0: first), the same order
   *   on every daemon: who fires a deadline its own daemon did not.
   */
  constructor(
    private readonly clock: Clock,
    private readonly runBatch: (work: () => Tx<void>) => Awaitable<void> = (work) => drain(work()),
    private readonly onError: (err: unknown) => void = (err) => console.error("airlock: an expiry failed:", err),
    private readonly lookBatch?: (work: () => Tx<(number | null)[]>) => Awaitable<(number | null)[]>,
    private readonly turn: (key: string) => number = () => 0,
  ) {}

  /**
   * Schedules fn at time `at` under key, replacing any entry with that key. `look`: the
   * deadline was read from rows another daemon wrote (a catch-up's refresh), whose own timer
   * fires it at `at`. Here the timer waits OTHERS_GRACE_MS more, then reads the row's deadline
   * in the shared order and runs fn (in the global order) only if it is still due; and a call
   * that is a row body does not run it first (row bodies never act on a row whose deadline
   * passed: their statements check it). Without `look`, fn runs at `at` as it always did.
   * A deadline read from rows that this daemon armed itself, to the millisecond (its own write,
   * read back by a catch-up that rereads the rows it stamped), keeps its own entry: it still
   * fires at `at`, not a grace later.
   */
  at(key: string, at: number, fn: Due, look?: Look): void {
    const mine = look ? this.entries.get(key) : undefined;
    if (mine && !mine.look && !mine.outside && mine.at === at) return;
    this.add(key, at, fn, null, this.lookBatch ? (look ?? null) : null);
  }

  /**
   * at(), unless an entry of its own under key falls due no later: one timer for the earliest of
   * many deadlines (the notes' expiry), moved earlier by a write without reading the others.
   */
  atEarliest(key: string, at: number, fn: Due): void {
    const e = this.entries.get(key);
    if (e && !e.look && !e.outside && e.at <= at) return;
    this.at(key, at, fn);
  }

  /**
   * Schedules fn at time `at` under key, to run outside any transaction: a periodic check that
   * decides for itself whether it needs one (on a shared store a look in the shared order first,
   * and the global order only to change something: docs/cluster.md, "Periodic checks"). An entry
   * of at() that falls due makes the next call, or the timer, open a transaction for it; this
   * one never does. fn only starts its work: it must not throw, nor wait.
   */
  atOutside(key: string, at: number, fn: () => void): void {
    this.add(key, at, () => {}, fn, null);
  }

  private add(key: string, at: number, fn: Due, outside: (() => void) | null, look: Look | null, lookAt = 0): void {
    this.cancel(key);
    const e: Entry = { key, at, seq: ++this.seq, fn, live: true, outside, look, lookAt };
    this.entries.set(key, e);
    this.heapOf(e).push(e);
    if (this.firesAt(e) < this.armedAt) this.arm();
  }

  /** Where an entry waits: its deadline (own), its look (another daemon's), or its turn to look again (overdue). */
  private heapOf(e: Entry): Heap {
    return e.lookAt > 0 ? this.overdue : e.look ? this.later : this.heap;
  }

  /** When the timer must wake for an entry. */
  private firesAt(e: Entry): number {
    return e.lookAt > 0 ? e.lookAt : e.look ? e.at + OTHERS_GRACE_MS : e.at;
  }

  cancel(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    e.live = false;
    this.entries.delete(key);
    // Cancelled entries leave the heaps lazily; rebuild them when they outnumber the live ones,
    // so that a lock renewed every second for hours does not grow a heap.
    const held = this.heap.length + this.later.length + this.overdue.length;
    if (held > 64 && held > 2 * this.entries.size) for (const h of [this.heap, this.later, this.overdue]) h.compact();
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Runs every entry that is due, earliest first, those armed from others' rows too (the caller provides the transaction). */
  *runDue(): Tx<void> {
    const now = this.clock.now();
    for (;;) {
      // Every overdue entry is due (its deadline passed before its look).
      const top = this.overdue.peek() ?? earliest(this.heap.peek(), this.later.peek());
      if (!top || top.at > now) break;
      this.take(top);
      if (top.outside) {
        this.start(top);
        continue;
      }
      if (TRACING) mark(`due ${top.key}`);
      const body = top.fn();
      if (body) yield* body;
    }
  }

  /**
   * True when some entry that needs a transaction is due now; cheap enough to ask on every call.
   * The outside entries due before it are started first (they need no transaction). With
   * `rowBody` (the call is a row body), the entries armed from other daemons' rows are left to
   * their look.
   */
  hasDue(rowBody = false): boolean {
    this.startOutside();
    const now = this.clock.now();
    if (!rowBody && this.overdue.peek()) return true;
    const top = rowBody ? this.heap.peek() : earliest(this.heap.peek(), this.later.peek());
    return top !== undefined && top.at <= now;
  }

  /** Starts the outside entries at the top of the heap that are due. */
  private startOutside(): void {
    const now = this.clock.now();
    for (;;) {
      const top = this.heap.peek();
      if (!top || !top.outside || top.at > now) return;
      this.take(top);
      this.start(top);
    }
  }

  /** Runs an outside entry's fn: whatever it returns is not a body to run. */
  private start(e: Entry): void {
    try {
      e.outside!();
    } catch (err) {
      this.onError(err);
    }
  }

  private take(e: Entry): void {
    this.heapOf(e).remove(e);
    this.entries.delete(e.key);
    e.live = false;
  }

  /**
   * The entries armed from other daemons' rows whose grace has passed (and the overdue ones
   * whose turn came), looked at in one read in the shared order: a row no longer there (or no
   * longer expiring) ends the entry; one whose deadline moved (a heartbeat or renewal
   * elsewhere, which moves no version) is armed again at it, as another daemon's; one still
   * due fires in the global order, as any entry does, on the daemon whose turn is first, and on
   * the others only if it is still due when their turn comes (a daemon that set it and died
   * leaves it to one survivor, not to all of them at once). A look that fails leaves them to
   * fire in the global order.
   */
  private lookAtLater(): void {
    const now = this.clock.now();
    const looked: Entry[] = [];
    for (let top = this.later.peek(); top && top.at + OTHERS_GRACE_MS <= now; top = this.later.peek()) {
      this.take(top);
      looked.push(top);
    }
    for (let top = this.overdue.peek(); top && top.lookAt <= now; top = this.overdue.peek()) {
      this.take(top);
      looked.push(top);
    }
    if (looked.length === 0) return;
    // Re-added only if nothing armed the key meanwhile (a catch-up's refresh, a call).
    const again = (e: Entry, at: number, look: Look | null, lookAt = 0) => {
      if (!this.entries.has(e.key)) this.add(e.key, at, e.fn, null, look, lookAt);
    };
    const settle = (deadlines: readonly (number | null)[]) => {
      const now = this.clock.now();
      looked.forEach((e, i) => {
        const at = deadlines[i];
        if (at === null || at === undefined) return;
        if (at > now) return again(e, at, e.look);
        const turn = e.lookAt > 0 ? 0 : this.turn(e.key);
        if (turn === 0) again(e, at, null);
        else again(e, at, e.look, now + turn * TURN_STEP_MS);
      });
    };
    const fail = (err: unknown) => {
      this.onError(err);
      for (const e of looked) again(e, e.at, null);
    };
    try {
      const read = this.lookBatch!(function* () {
        const out: (number | null)[] = [];
        for (const e of looked) out.push(yield* e.look!());
        return out;
      });
      if (read instanceof Promise) read.then(settle, fail);
      else settle(read);
    } catch (err) {
      fail(err);
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.entries.clear();
    for (const h of [this.heap, this.later, this.overdue]) h.clear();
  }

  private fire = (): void => {
    this.timer = null;
    this.armedAt = Number.POSITIVE_INFINITY;
    if (this.stopped) return;
    this.lookAtLater();
    let batch: Awaitable<void> | undefined;
    try {
      if (this.hasDue(true)) batch = this.runBatch(() => this.runDue());
    } catch (err) {
      // An expiry that throws (a full disk, say) must not stop every later one from firing.
      this.onError(err);
    }
    // A batch still waiting for its turn has not taken its entries yet: re-arming now would
    // fire again at once, and again, until it runs.
    if (batch instanceof Promise) {
      batch.then(
        () => this.arm(),
        (err: unknown) => {
          this.onError(err);
          this.arm();
        },
      );
    } else {
      this.arm();
    }
  };

  private arm(): void {
    if (this.stopped) return;
    const at = Math.min(...[this.heap.peek(), this.later.peek(), this.overdue.peek()].map((e) => (e ? this.firesAt(e) : Number.POSITIVE_INFINITY)));
    if (at === this.armedAt && this.timer) return;
    if (this.timer) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.armedAt = at;
    if (at === Number.POSITIVE_INFINITY) return;
    const delay = Math.min(MAX_TIMER_DELAY_MS, Math.max(0, at - this.clock.now()));
    this.timer = this.clock.setTimer(this.fire, delay);
  }
}

/** The earlier of two entries (by deadline, then by when they were scheduled). */
function earliest(a: Entry | undefined, b: Entry | undefined): Entry | undefined {
  if (!a) return b;
  if (!b) return a;
  return less(a, b) ? a : b;
}

const byDeadline = (e: Entry): number => e.at;

/** Whether a comes before b: by `by` (the deadline unless told), then by when it was added. */
function less(a: Entry, b: Entry, by: (e: Entry) => number = byDeadline): boolean {
  const x = by(a);
  const y = by(b);
  return x < y || (x === y && a.seq < b.seq);
}

/** A binary min-heap of entries ordered by `by` (their deadline unless told), then seq; cancelled entries are dropped lazily. */
class Heap {
  private readonly h: Entry[] = [];

  constructor(private readonly by: (e: Entry) => number = byDeadline) {}

  get length(): number {
    return this.h.length;
  }

  /** The earliest live entry. */
  peek(): Entry | undefined {
    while (this.h.length > 0 && !this.h[0]!.live) this.pop();
    return this.h[0];
  }

  /** Takes out the entry peek() returned (callers take only the top). */
  remove(e: Entry): void {
    if (this.h[0] !== e) throw new Error(`scheduler: ${e.key} taken out of a heap it does not top`);
    this.pop();
  }

  clear(): void {
    this.h.length = 0;
  }

  compact(): void {
    const live = this.h.filter((e) => e.live);
    this.h.length = 0;
    for (const e of live) this.push(e);
  }

  push(e: Entry): void {
    const h = this.h;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(h[i]!, h[p]!, this.by)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): Entry | undefined {
    const h = this.h;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && less(h[l]!, h[m]!, this.by)) m = l;
        if (r < h.length && less(h[r]!, h[m]!, this.by)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

/** Runs a body that yields no statement (a scheduler with no store: tests of the heap alone). */
function drain(body: Tx<void>): void {
  if (!body.next().done) throw new Error("a store-less scheduler ran an entry that needs the store");
}
