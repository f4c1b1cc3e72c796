// The one expiry scheduler. Every deadline in Airlock (lock TTLs, heartbeats, task leases,
// note expiry, a blocked call's wait, a detached waiter's grace) is an entry here, keyed so
// that a renewal replaces it and a release cancels it. A single underlying timer is armed at
// the earliest deadline and re-armed whenever that changes: no polling sweep, so an expiry
// fires at its exact millisecond rather than on the next tick of a loop.
import type { Awaitable } from "../store/store.ts";
import type { Tx } from "../store/tx.ts";
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
}

export class Scheduler {
  private readonly entries = new Map<string, Entry>();
  private readonly heap: Entry[] = [];
  private seq = 0;
  private timer: TimerHandle | null = null;
  private armedAt = Number.POSITIVE_INFINITY;
  private stopped = false;

  /**
   * @param runBatch runs the processing of due entries (a transaction body) in one
   *   transaction; a store that answers after a round trip returns a promise.
   */
  constructor(
    private readonly clock: Clock,
    private readonly runBatch: (work: () => Tx<void>) => Awaitable<void> = (work) => drain(work()),
    private readonly onError: (err: unknown) => void = (err) => console.error("airlock: an expiry failed:", err),
  ) {}

  /** Schedules fn at time `at` under key, replacing any entry with that key. */
  at(key: string, at: number, fn: Due): void {
    this.add(key, at, fn);
  }

  /**
   * Schedules fn at time `at` under key, to run outside any transaction: a periodic check that
   * decides for itself whether it needs one (on a shared store a look in the shared order first,
   * and the global order only to change something: docs/cluster.md, "Periodic checks"). An entry
   * of at() that falls due makes the next call, or the timer, open a transaction for it; this
   * one never does. fn only starts its work: it must not throw, nor wait.
   */
  atOutside(key: string, at: number, fn: () => void): void {
    this.add(key, at, () => {}, fn);
  }

  private add(key: string, at: number, fn: Due, outside: (() => void) | null = null): void {
    this.cancel(key);
    const e: Entry = { key, at, seq: ++this.seq, fn, live: true, outside };
    this.entries.set(key, e);
    this.push(e);
    if (at < this.armedAt) this.arm();
  }

  cancel(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    e.live = false;
    this.entries.delete(key);
    // Cancelled entries leave the heap lazily; rebuild it when they outnumber the live ones,
    // so that a lock renewed every second for hours does not grow the heap.
    if (this.heap.length > 64 && this.heap.length > 2 * this.entries.size) this.compact();
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Runs every entry that is due, earliest first (the caller provides the transaction). */
  *runDue(): Tx<void> {
    const now = this.clock.now();
    for (;;) {
      const top = this.peekLive();
      if (!top || top.at > now) break;
      this.take(top);
      if (top.outside) {
        this.start(top);
        continue;
      }
      const body = top.fn();
      if (body) yield* body;
    }
  }

  /**
   * True when some entry that needs a transaction is due now; cheap enough to ask on every call.
   * The outside entries due before it are started first (they need no transaction).
   */
  hasDue(): boolean {
    this.startOutside();
    const top = this.peekLive();
    return top !== undefined && top.at <= this.clock.now();
  }

  /** Starts the outside entries at the top of the heap that are due. */
  private startOutside(): void {
    const now = this.clock.now();
    for (;;) {
      const top = this.peekLive();
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
    this.pop();
    this.entries.delete(e.key);
    e.live = false;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.entries.clear();
    this.heap.length = 0;
  }

  private fire = (): void => {
    this.timer = null;
    this.armedAt = Number.POSITIVE_INFINITY;
    if (this.stopped) return;
    let batch: Awaitable<void> | undefined;
    try {
      if (this.hasDue()) batch = this.runBatch(() => this.runDue());
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
    const top = this.peekLive();
    const at = top ? top.at : Number.POSITIVE_INFINITY;
    if (at === this.armedAt && this.timer) return;
    if (this.timer) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.armedAt = at;
    if (at === Number.POSITIVE_INFINITY) return;
    const delay = Math.min(MAX_TIMER_DELAY_MS, Math.max(0, at - this.clock.now()));
    this.timer = this.clock.setTimer(this.fire, delay);
  }

  private compact(): void {
    const live = this.heap.filter((e) => e.live);
    this.heap.length = 0;
    for (const e of live) this.push(e);
  }

  private peekLive(): Entry | undefined {
    while (this.heap.length > 0 && !this.heap[0]!.live) this.pop();
    return this.heap[0];
  }

  // A binary min-heap ordered by (at, seq); cancelled entries are dropped lazily.
  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): Entry | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
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
