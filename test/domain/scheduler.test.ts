import { describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/domain/clock.ts";
import { OTHERS_GRACE_MS, Scheduler, TURN_STEP_MS } from "../../src/domain/timers.ts";
import type { Tx } from "../../src/store/tx.ts";
import { LateClock } from "./support.ts";

/** Runs a body of due entries to its end; these entries need no store, so none yields a statement. */
function drain(body: Tx<void>): void {
  for (const stmt of body) throw new Error(`a store-less entry yielded a statement: ${stmt.sql}`);
}

function setup() {
  const clock = new ManualClock(1_000_000);
  const scheduler = new Scheduler(clock);
  const fired: { key: string; at: number }[] = [];
  const schedule = (key: string, delay: number) =>
    scheduler.at(key, clock.now() + delay, () => void fired.push({ key, at: clock.now() }));
  return { clock, scheduler, fired, schedule };
}

describe("Scheduler", () => {
  test("fires an entry at its exact deadline and not a millisecond before", () => {
    const { clock, fired, schedule } = setup();
    const start = clock.now();
    schedule("a", 250);
    clock.advance(249);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual([{ key: "a", at: start + 250 }]);
  });

  test("fires entries in deadline order whatever order they were added in", () => {
    const { clock, fired, schedule } = setup();
    const start = clock.now();
    schedule("c", 300);
    schedule("a", 100);
    schedule("b", 200);
    clock.advance(1_000);
    expect(fired).toEqual([
      { key: "a", at: start + 100 },
      { key: "b", at: start + 200 },
      { key: "c", at: start + 300 },
    ]);
  });

  test("fires entries with the same deadline in the order they were scheduled", () => {
    const { clock, fired, schedule } = setup();
    schedule("second", 100);
    schedule("first", 50);
    schedule("third", 100);
    clock.advance(100);
    expect(fired.map((f) => f.key)).toEqual(["first", "second", "third"]);
  });

  test("re-arms a key that is scheduled again, to the later deadline", () => {
    const { clock, scheduler, fired, schedule } = setup();
    const start = clock.now();
    schedule("lease", 100);
    schedule("lease", 500);
    expect(scheduler.size).toBe(1);
    clock.advance(499);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual([{ key: "lease", at: start + 500 }]);
  });

  test("re-arms a key that is scheduled again, to the earlier deadline", () => {
    const { clock, fired, schedule } = setup();
    const start = clock.now();
    schedule("lease", 500);
    schedule("lease", 100);
    clock.advance(100);
    expect(fired).toEqual([{ key: "lease", at: start + 100 }]);
    clock.advance(1_000);
    expect(fired).toHaveLength(1);
  });

  test("fires a deadline beyond setTimeout's 32-bit range at its exact time", () => {
    const { clock, fired, schedule } = setup();
    const start = clock.now();
    const far = 3 * 2_147_483_647;
    schedule("far", far);
    clock.advance(far - 1);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual([{ key: "far", at: start + far }]);
  });

  test("never fires a cancelled entry", () => {
    const { clock, scheduler, fired, schedule } = setup();
    schedule("a", 100);
    schedule("b", 200);
    scheduler.cancel("a");
    expect(scheduler.has("a")).toBe(false);
    expect(scheduler.has("b")).toBe(true);
    clock.advance(1_000);
    expect(fired.map((f) => f.key)).toEqual(["b"]);
  });

  test("runDue processes every entry that is due, earliest first, and leaves the rest", () => {
    // Timers that never fire: time passes, and runDue must catch up on everything due.
    const clock = new LateClock(0);
    const scheduler = new Scheduler(clock);
    const ran: string[] = [];
    scheduler.at("late", 30, () => void ran.push("late"));
    scheduler.at("early", 10, () => void ran.push("early"));
    scheduler.at("future", 100, () => void ran.push("future"));
    clock.advance(50);
    expect(ran).toEqual([]);
    expect(scheduler.hasDue()).toBe(true);
    drain(scheduler.runDue());
    expect(ran).toEqual(["early", "late"]);
    expect(scheduler.hasDue()).toBe(false);
    expect(scheduler.has("future")).toBe(true);
    expect(scheduler.size).toBe(1);
  });

  test("runs entries that a due entry schedules for a time already due in the same pass", () => {
    const clock = new ManualClock(0);
    const scheduler = new Scheduler(clock);
    const ran: string[] = [];
    scheduler.at("first", 10, () => {
      ran.push("first");
      scheduler.at("follow-up", clock.now(), () => void ran.push("follow-up"));
    });
    clock.advance(10);
    expect(ran).toEqual(["first", "follow-up"]);
  });

  test("keeps one underlying timer armed, whatever the number of entries", () => {
    const { clock, schedule } = setup();
    for (let i = 0; i < 20; i++) schedule(`k${i}`, 100 + i);
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(105);
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(100);
    expect(clock.pendingTimers()).toBe(0);
  });

  test("keeps the heap bounded by the live entries after many renewals", () => {
    const { clock, scheduler, fired, schedule } = setup();
    for (let i = 0; i < 10_000; i++) {
      schedule("renewed-a", 1_000 + i);
      schedule("renewed-b", 2_000 + i);
      clock.advance(0);
    }
    expect(scheduler.size).toBe(2);
    const heap = scheduler["heap"] as unknown as { length: number };
    expect(heap.length).toBeLessThanOrEqual(2 * 64 + 2);
    clock.advance(20_000);
    expect(fired.map((f) => f.key)).toEqual(["renewed-a", "renewed-b"]);
    expect(scheduler.size).toBe(0);
  });

  test("reports size as the number of live entries only", () => {
    const { scheduler, schedule } = setup();
    schedule("a", 10);
    schedule("b", 20);
    schedule("a", 30);
    scheduler.cancel("b");
    scheduler.cancel("missing");
    expect(scheduler.size).toBe(1);
  });

  test("fires nothing after stop", () => {
    const { clock, scheduler, fired, schedule } = setup();
    schedule("a", 10);
    scheduler.stop();
    clock.advance(100);
    expect(fired).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe("Scheduler when an expiry throws", () => {
  test("reports the error and still fires the entries after it", () => {
    const clock = new ManualClock(1_000_000);
    const errors: unknown[] = [];
    const scheduler = new Scheduler(clock, (work) => drain(work()), (err) => errors.push(err));
    const fired: string[] = [];
    scheduler.at("bad", clock.now() + 10, () => {
      throw new Error("disk full");
    });
    scheduler.at("good", clock.now() + 20, () => void fired.push("good"));
    clock.advance(10);
    expect(errors.map(String)).toEqual(["Error: disk full"]);
    clock.advance(10);
    expect(fired).toEqual(["good"]);
  });
});

describe("Scheduler entries run outside any transaction (atOutside)", () => {
  /** A scheduler whose transactions are counted: each runBatch is one. A LateClock never fires its timer. */
  function counted(clock = new ManualClock(1_000_000)) {
    let transactions = 0;
    const scheduler = new Scheduler(clock, (work) => {
      transactions++;
      drain(work());
    });
    return { clock, scheduler, transactions: () => transactions };
  }

  test("fall due without opening a transaction, from the timer", () => {
    const { clock, scheduler, transactions } = counted();
    const ran: number[] = [];
    scheduler.atOutside("look", clock.now() + 100, () => ran.push(clock.now() - 1_000_000));
    clock.advance(99);
    expect(ran).toEqual([]);
    clock.advance(1);
    expect([ran, transactions(), scheduler.size]).toEqual([[100], 0, 0]);
  });

  test("due when a call asks, before the timer: started by the question, which answers that nothing needs a transaction", () => {
    const { clock, scheduler, transactions } = counted(new LateClock(1_000_000));
    const ran: string[] = [];
    scheduler.atOutside("look", clock.now() + 50, () => ran.push("look"));
    clock.advance(49);
    expect([scheduler.hasDue(), ran]).toEqual([false, []]);
    clock.advance(1);
    expect([scheduler.hasDue(), ran, transactions(), scheduler.size]).toEqual([false, ["look"], 0, 0]);
  });

  test("an entry that needs a transaction, due with them, still gets one; all run in deadline order", () => {
    const { clock, scheduler, transactions } = counted(new LateClock(1_000_000));
    const ran: string[] = [];
    scheduler.atOutside("first", clock.now() + 10, () => ran.push("first"));
    scheduler.at("expiry", clock.now() + 20, () => void ran.push("expiry"));
    scheduler.atOutside("last", clock.now() + 20, () => ran.push("last"));
    clock.advance(30);
    expect(scheduler.hasDue()).toBe(true);
    expect(ran).toEqual(["first"]);
    drain(scheduler.runDue());
    expect([ran, scheduler.hasDue()]).toEqual([["first", "expiry", "last"], false]);
    // And from the timer: one transaction for the entry that needs it, none for the other.
    const timed = counted();
    timed.scheduler.atOutside("look", timed.clock.now() + 5, () => ran.push("look"));
    timed.scheduler.at("expiry", timed.clock.now() + 5, () => void ran.push("expiry 2"));
    timed.clock.advance(5);
    expect([ran.slice(3), timed.transactions()]).toEqual([["look", "expiry 2"], 1]);
    expect(transactions()).toBe(0);
  });
});

describe("Scheduler entries armed from other daemons' rows (a look)", () => {
  /** A scheduler with a look batch (a shared store's): transactions and looks counted; `rows` answers each key's deadline. */
  function shared(clock = new ManualClock(1_000_000), turn = 0) {
    const counts = { transactions: 0, looks: 0 };
    const rows = new Map<string, number | null>();
    let failLooks = false;
    const scheduler = new Scheduler(
      clock,
      (work) => {
        counts.transactions++;
        drain(work());
      },
      () => {},
      (work) => {
        counts.looks++;
        if (failLooks) throw new Error("store unreachable");
        const body = work();
        const r = body.next();
        if (!r.done) throw new Error("a look here yields no statement");
        return r.value;
      },
      () => turn,
    );
    const ran: string[] = [];
    /** key, armed from rows at `at` (the row's deadline in `rows` decides its look). */
    const fromRows = (key: string, at: number, row: number | null = at) => {
      rows.set(key, row);
      scheduler.at(key, at, () => void ran.push(key), function* () {
        return rows.get(key) ?? null;
      });
    };
    return { clock, scheduler, counts, rows, ran, fromRows, failing: () => (failLooks = true) };
  }

  test("the timer looks OTHERS_GRACE_MS after the deadline, not at it; a row still due runs in one transaction", () => {
    const { clock, counts, ran, fromRows } = shared();
    const t0 = clock.now();
    fromRows("lock:a", t0 + 100);
    clock.advance(100 + OTHERS_GRACE_MS - 1);
    expect([ran, counts]).toEqual([[], { transactions: 0, looks: 0 }]);
    clock.advance(1);
    expect([ran, counts]).toEqual([["lock:a"], { transactions: 1, looks: 1 }]);
  });

  test("a deadline this daemon armed itself, read back from its rows, keeps its own timer; one another daemon moved is armed as another's", () => {
    const { clock, scheduler, counts, ran, fromRows } = shared();
    const t0 = clock.now();
    scheduler.at("lock:mine", t0 + 100, () => void ran.push("lock:mine"));
    scheduler.at("lock:moved", t0 + 100, () => void ran.push("lock:moved"));
    fromRows("lock:mine", t0 + 100); // a catch-up rereads the row this daemon wrote
    fromRows("lock:moved", t0 + 5_000); // another daemon renewed it
    clock.advance(100);
    expect([ran, counts]).toEqual([["lock:mine"], { transactions: 1, looks: 0 }]);
    clock.advance(5_000 - 100 + OTHERS_GRACE_MS);
    expect([ran, counts]).toEqual([["lock:mine", "lock:moved"], { transactions: 2, looks: 1 }]);
  });

  test("a row gone (the other daemon expired it) ends the entry with no transaction; one moved later is armed again, as another's", () => {
    const { clock, scheduler, counts, rows, ran, fromRows } = shared();
    const t0 = clock.now();
    fromRows("agent:gone", t0 + 100, null);
    fromRows("agent:beat", t0 + 100);
    rows.set("agent:beat", t0 + 10_000); // a heartbeat elsewhere moved it
    clock.advance(100 + OTHERS_GRACE_MS);
    expect([ran, counts, scheduler.size, scheduler.has("agent:beat")]).toEqual([[], { transactions: 0, looks: 1 }, 1, true]);
    clock.advance(10_000 - 100 - 1); // its look is due OTHERS_GRACE_MS after the new deadline
    expect(ran).toEqual([]);
    clock.advance(1);
    expect([ran, counts]).toEqual([["agent:beat"], { transactions: 1, looks: 2 }]);
  });

  test("a row body's call leaves them to their look; any other call runs them first, as it runs every entry due", () => {
    const { clock, scheduler, counts, ran, fromRows } = shared(new LateClock(1_000_000));
    fromRows("lock:b", clock.now() + 100);
    clock.advance(100);
    expect(scheduler.hasDue(true)).toBe(false);
    expect(scheduler.hasDue()).toBe(true);
    drain(scheduler.runDue());
    expect([ran, counts.looks]).toEqual([["lock:b"], 0]);
  });

  test("a look that fails leaves the entries to fire in a transaction", () => {
    const { clock, scheduler, counts, ran, fromRows, failing } = shared();
    fromRows("slot:c", clock.now() + 100);
    failing();
    clock.advance(100 + OTHERS_GRACE_MS);
    expect([ran, counts]).toEqual([["slot:c"], { transactions: 1, looks: 1 }]);
    expect(scheduler.size).toBe(0);
  });

  test("without a look batch (SQLite, one daemon), an entry with a look fires at its deadline", () => {
    const clock = new ManualClock(1_000_000);
    const scheduler = new Scheduler(clock, (work) => drain(work()));
    const ran: number[] = [];
    scheduler.at("lock:d", clock.now() + 100, () => void ran.push(clock.now() - 1_000_000), function* () {
      return null;
    });
    clock.advance(100);
    expect(ran).toEqual([100]);
  });

  test("still due at its look (its daemon slow or gone): the daemon whose turn is first fires it; the one whose turn is n looks again n steps later", () => {
    const first = shared(new ManualClock(1_000_000), 0);
    first.fromRows("agent:x", first.clock.now() + 100);
    first.clock.advance(100 + OTHERS_GRACE_MS);
    expect([first.ran, first.counts]).toEqual([["agent:x"], { transactions: 1, looks: 1 }]);

    const third = shared(new ManualClock(1_000_000), 2);
    third.fromRows("agent:x", third.clock.now() + 100);
    third.fromRows("agent:y", third.clock.now() + 100);
    third.clock.advance(100 + OTHERS_GRACE_MS);
    expect([third.ran, third.counts]).toEqual([[], { transactions: 0, looks: 1 }]);
    // Meanwhile a call that is a row body leaves them alone; any other call would run them.
    expect([third.scheduler.hasDue(true), third.scheduler.hasDue()]).toEqual([false, true]);
    // Another daemon expired x meanwhile; y is still due when this one's turn comes.
    third.rows.set("agent:x", null);
    third.clock.advance(2 * TURN_STEP_MS - 1);
    expect(third.counts).toEqual({ transactions: 0, looks: 1 });
    third.clock.advance(1);
    expect([third.ran, third.counts, third.scheduler.size]).toEqual([["agent:y"], { transactions: 1, looks: 2 }, 0]);
  });
});
