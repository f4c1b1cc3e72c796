// Time, and timers that follow it. The daemon uses the system clock; domain tests use a
// ManualClock so that expiry and timeouts are exact and need no sleeps.

/** What setTimer returns, for clearTimer: opaque, read only by the clock that made it. */
export type TimerHandle = object;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimer(fn: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

type SystemTimer = ReturnType<typeof setTimeout>;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (fn, delayMs): TimerHandle => setTimeout(fn, delayMs),
  clearTimer(handle) {
    clearTimeout(handle as SystemTimer);
  },
};

/**
 * The system clock shifted by `offset()` ms: the database's clock, for daemons sharing a store.
 * It never goes back: the offset is re-estimated at every heartbeat from a round trip, and a
 * smaller estimate must not make a deadline set a moment ago look farther away than it was set
 * (a 30 s offer read as 31 s), so a lower reading holds at the last one until time catches up.
 */
export function offsetClock(offset: () => number, wall: () => number = Date.now): Clock {
  let last = -Infinity;
  return {
    ...systemClock,
    now: () => {
      last = Math.max(last, wall() + offset());
      return last;
    },
  };
}

type ManualTimer = { readonly id: number };

/** A clock that moves only when told to; due timers fire, in order, as it advances. */
export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = 1_700_000_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, delayMs: number): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, delayMs), fn });
    return { id } satisfies ManualTimer;
  }

  clearTimer(handle: TimerHandle): void {
    this.timers.delete((handle as ManualTimer).id);
  }

  /** Moves time forward by ms, firing every timer that falls due on the way, earliest first. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= end && (!next || e[1].at < next[1].at || (e[1].at === next[1].at && e[0] < next[0]))) next = e;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
  }

  pendingTimers(): number {
    return this.timers.size;
  }
}
