// Section 3's fixes over v2, over real HTTP: no stale heads (timed-out and disconnected
// waiters never stall or receive a lock), hand-off at the exact TTL or heartbeat deadline,
// and events that wake every waiter and never miss a signal.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type DaemonProcess, startDaemon } from "../helpers/daemon.ts";
import { track, until } from "../helpers/until.ts";

// Bun's default is 5 s; a blocked waiter below may legitimately take longer when a test fails.
setDefaultTimeout(20_000);

// Budgets that a loaded 2-core machine holds (a PostgreSQL pass once took 233 ms for a hand-off
// of a few ms), yet well inside the 10 s waits below: an answer within one is the grant, or the
// wake-up, and not the wait running out. How many milliseconds a hand-off after an expiry takes
// (it must be milliseconds, not v2's 250 ms–1 s sweep) is bench/'s figure, as a ratio to a ping;
// here the tests prove order and outcome.
const HANDOFF_BUDGET_MS = 5_000;
const PROMPT_MS = 5_000;
// Long enough that the waiter is queued before the lock lapses, even on a loaded machine.
const LAPSE_SECONDS = 2;

let d: DaemonProcess;
beforeAll(async () => {
  d = await startDaemon();
});
afterAll(async () => {
  await d.kill();
  // Measured lags, for the record in the test output.
  if (lags.length) console.log(`hand-off lags after the deadline: ${lags.join(", ")}`);
});
const lags: string[] = [];

interface LockEntry {
  name: string;
  agent_id: string;
  waiters: { agent_id: string; blocked: boolean }[];
}

async function lockEntry(name: string): Promise<LockEntry | undefined> {
  return ((await d.call("list_locks")) as LockEntry[]).find((l) => l.name === name);
}

async function waiterState(name: string, agent: string): Promise<boolean | undefined> {
  return (await lockEntry(name))?.waiters.find((w) => w.agent_id === agent)?.blocked;
}

describe("no stale heads", () => {
  test("a waiter whose wait timed out neither stalls the live waiter behind it nor is handed the lock", async () => {
    const name = "stale-timeout";
    const a = await d.call("lock_resource", { name, agent_id: "A" });
    const t = track(d.call("lock_resource", { name, agent_id: "T", wait_seconds: 1 }));
    await until("T blocked", async () => (await waiterState(name, "T")) === true);
    const b = track(d.call("lock_resource", { name, agent_id: "B", wait_seconds: 10 }));
    await until("B blocked", async () => (await waiterState(name, "B")) === true);

    const tAnswer = await t.promise;
    expect(tAnswer).toMatchObject({ locked: false, held_by: "A", queue_position: 1 });
    expect(await waiterState(name, "T")).toBe(false); // detached, keeps its place
    expect(b.settled()).toBe(false);

    const unlockedAt = performance.now();
    expect(await d.call("unlock_resource", { name, lock_token: a.lock_token })).toEqual({ released: true });
    const bAnswer = await b.promise;
    expect(bAnswer.locked).toBe(true);
    expect(b.at() - unlockedAt).toBeLessThan(PROMPT_MS);
    const held = await lockEntry(name);
    expect(held?.agent_id).toBe("B");
    expect(held?.waiters.map((w) => w.agent_id)).toEqual(["T"]);
    await d.call("unlock_resource", { name, lock_token: bAnswer.lock_token });
  });

  test("a waiter whose client disconnected mid-wait is detached at once, never stalls the waiter behind it, and is never handed the lock", async () => {
    const name = "stale-disconnect";
    const a = await d.call("lock_resource", { name, agent_id: "A" });
    const abort = new AbortController();
    const gone = d.call("lock_resource", { name, agent_id: "D", wait_seconds: 30 }, { signal: abort.signal }).catch((e: Error) => e);
    await until("D blocked", async () => (await waiterState(name, "D")) === true);
    const b = track(d.call("lock_resource", { name, agent_id: "B", wait_seconds: 10 }));
    await until("B blocked", async () => (await waiterState(name, "B")) === true);

    abort.abort();
    expect(await gone).toBeInstanceOf(Error);
    // The daemon notices the disconnect on its own, long before D's 30 s deadline.
    await until("D detached after its client went away", async () => (await waiterState(name, "D")) !== true, 10_000);

    const unlockedAt = performance.now();
    expect(await d.call("unlock_resource", { name, lock_token: a.lock_token })).toEqual({ released: true });
    const bAnswer = await b.promise;
    expect(bAnswer.locked).toBe(true);
    expect(b.at() - unlockedAt).toBeLessThan(PROMPT_MS);
    expect((await lockEntry(name))?.agent_id).toBe("B");
    await d.call("unlock_resource", { name, lock_token: bAnswer.lock_token });
  });

  test("with a timed-out and a disconnected waiter both ahead of it, the live waiter gets the lock on unlock", async () => {
    const name = "stale-both";
    const a = await d.call("lock_resource", { name, agent_id: "A" });
    const t = d.call("lock_resource", { name, agent_id: "T", wait_seconds: 1 });
    await until("T blocked", async () => (await waiterState(name, "T")) === true);
    const abort = new AbortController();
    const gone = d.call("lock_resource", { name, agent_id: "D", wait_seconds: 30 }, { signal: abort.signal }).catch((e: Error) => e);
    await until("D blocked", async () => (await waiterState(name, "D")) === true);
    const b = d.call("lock_resource", { name, agent_id: "B", wait_seconds: 10 });
    await until("B blocked", async () => (await waiterState(name, "B")) === true);
    abort.abort();
    await gone;
    expect((await t).locked).toBe(false);
    await until("T and D detached", async () => (await lockEntry(name))?.waiters.filter((w) => w.blocked).length === 1);

    await d.call("unlock_resource", { name, lock_token: a.lock_token });
    const bAnswer = await b;
    expect(bAnswer.locked).toBe(true);
    expect((await lockEntry(name))?.agent_id).toBe("B");
    await d.call("unlock_resource", { name, lock_token: bAnswer.lock_token });
  });
});

describe("hand-off at the exact deadline", () => {
  /**
   * Holder A's lock lapses at a deadline while B waits; C asks after that deadline (whether
   * before or after the daemon's timer has fired). B is granted, not before the deadline and
   * within the budget; C is queued behind B, never ahead of it, and is granted once B unlocks.
   */
  async function handOffAtDeadline(name: string, lockByA: () => Promise<{ locked: boolean }>, lapsed?: () => Promise<void>) {
    const sentAt = performance.now(); // the deadline is at least this + LAPSE_SECONDS
    expect((await lockByA()).locked).toBe(true);
    const answeredAt = performance.now(); // ... and at most this + LAPSE_SECONDS
    const b = track(d.call("lock_resource", { name, agent_id: "B", wait_seconds: 10 }));
    await until("B blocked behind A", async () => (await waiterState(name, "B")) === true);
    expect(b.settled()).toBe(false);

    // Not a synchronization: C must queue behind B whether the hand-off has happened yet or not.
    await Bun.sleep(Math.max(0, answeredAt + LAPSE_SECONDS * 1000 + 1 - performance.now()));
    const c = track(d.call("lock_resource", { name, agent_id: "C", wait_seconds: 10 }));

    const bAnswer = await b.promise;
    const lag = b.at() - (sentAt + LAPSE_SECONDS * 1000);
    lags.push(`${name} ${lag.toFixed(1)} ms`);
    expect(bAnswer.locked).toBe(true);
    expect(lag).toBeGreaterThanOrEqual(0); // not before the deadline
    expect(lag).toBeLessThan(HANDOFF_BUDGET_MS);
    await until("C queued behind B", async () => (await waiterState(name, "C")) === true);
    const held = await lockEntry(name);
    expect(held?.agent_id).toBe("B");
    expect(held?.waiters.map((w) => w.agent_id)).toEqual(["C"]);
    expect(c.settled()).toBe(false);
    await lapsed?.();

    expect(await d.call("unlock_resource", { name, lock_token: bAnswer.lock_token })).toEqual({ released: true });
    const cAnswer = await c.promise;
    expect(cAnswer.locked).toBe(true);
    expect(c.at()).toBeGreaterThan(b.at());
    await d.call("unlock_resource", { name, lock_token: cAnswer.lock_token });
  }

  test("a lock whose TTL lapses is handed to the blocked waiter at the deadline, ahead of a later caller", async () => {
    await handOffAtDeadline(
      "ttl-handoff",
      () => d.call("lock_resource", { name: "ttl-handoff", agent_id: "A", ttl_seconds: LAPSE_SECONDS }),
    );
  });

  test("a lock whose holder's heartbeat lapses is handed to the blocked waiter at the deadline, ahead of a later caller", async () => {
    const name = "presence-handoff";
    await handOffAtDeadline(
      name,
      async () => {
        expect(await d.call("register_agent", { agent_id: "mortal", ttl_seconds: LAPSE_SECONDS })).toMatchObject({ registered: true });
        return d.call("lock_resource", { name, agent_id: "mortal", ttl_seconds: 600 });
      },
      async () => {
        expect((await d.call("list_agents")).map((x: { agent_id: string }) => x.agent_id)).not.toContain("mortal");
      },
    );
  });
});

describe("events", () => {
  test("one signal_event wakes all 3 concurrent waiters", async () => {
    const name = "ev-broadcast";
    const g0 = (await d.call("signal_event", { name })).generation as number;
    const waiters = [1, 2, 3].map(() => track(d.call("wait_for_event", { name, last_seen_generation: g0, wait_seconds: 10 })));
    await until("3 event waiters", async () => {
      const s = (await d.rpc("airlock/status")).result as { events: { name: string; waiters: number }[] };
      return s.events.find((e) => e.name === name)?.waiters === 3;
    });
    expect(waiters.some((w) => w.settled())).toBe(false);
    const signalledAt = performance.now();
    const g1 = (await d.call("signal_event", { name })).generation;
    expect(g1).toBe(g0 + 1);
    const answers = await Promise.all(waiters.map((w) => w.promise));
    for (const a of answers) expect(a).toEqual({ generation: g1, fired: true });
    for (const w of waiters) expect(w.at() - signalledAt).toBeLessThan(PROMPT_MS);
  });

  test("a signal between two wait calls is never missed: the next wait with the previous generation fires at once", async () => {
    const name = "ev-between";
    const g1 = (await d.call("signal_event", { name })).generation as number;
    expect(await d.call("wait_for_event", { name, last_seen_generation: g1, wait_seconds: 0 })).toEqual({ generation: g1, fired: false });
    const g2 = (await d.call("signal_event", { name })).generation as number; // between the calls
    const start = performance.now();
    expect(await d.call("wait_for_event", { name, last_seen_generation: g1, wait_seconds: 10 })).toEqual({ generation: g2, fired: true });
    expect(performance.now() - start).toBeLessThan(PROMPT_MS);
  });
});

describe("tasks", () => {
  async function queueWaiters(queue: string): Promise<number> {
    const s = (await d.rpc("airlock/status")).result as { queues: { queue: string; waiters: number }[] };
    return s.queues.find((q) => q.queue === queue)?.waiters ?? 0;
  }

  test("a task pushed after a blocked claimer's client disconnected is never handed to it", async () => {
    const queue = "ghost-q";
    // The queue must exist for status to count its waiters.
    const seed = await d.call("push_task", { queue, payload: "seed" });
    const seedClaim = await d.call("claim_next_task", { queue, agent_id: "w0" });
    expect(seedClaim).toMatchObject({ claimed: true, id: seed.id });
    const abort = new AbortController();
    const gone = d.call("claim_next_task", { queue, agent_id: "ghost", wait_seconds: 30 }, { signal: abort.signal }).catch((e: Error) => e);
    await until("ghost blocked on the queue", async () => (await queueWaiters(queue)) === 1);
    abort.abort();
    expect(await gone).toBeInstanceOf(Error);
    await until("ghost gone from the queue", async () => (await queueWaiters(queue)) === 0, 10_000);

    const pushed = await d.call("push_task", { queue, payload: "real work" });
    expect(await d.call("claim_next_task", { queue, agent_id: "live" })).toMatchObject({ claimed: true, id: pushed.id, payload: "real work" });
  });

  test("a registered claimant whose heartbeat lapses loses its claim at once to a blocked claimer", async () => {
    const queue = "lapse-q";
    const sentAt = performance.now();
    await d.call("register_agent", { agent_id: "flaky-worker", ttl_seconds: 1 });
    const { id } = await d.call("push_task", { queue, payload: "p" });
    const first = await d.call("claim_next_task", { queue, agent_id: "flaky-worker", lease_seconds: 600 });
    expect(first).toMatchObject({ claimed: true, id });
    const second = await d.call("claim_next_task", { queue, agent_id: "steady-worker", wait_seconds: 10 });
    const lag = performance.now() - (sentAt + 1000);
    lags.push(`task requeue ${lag.toFixed(1)} ms`);
    expect(second).toMatchObject({ claimed: true, id });
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThan(HANDOFF_BUDGET_MS);
    expect(await d.call("complete_task", { id, lease_token: first.lease_token })).toEqual({ completed: false });
    expect(await d.call("complete_task", { id, lease_token: second.lease_token })).toEqual({ completed: true });
  });

  test("a claimant that never registered keeps its task for its whole lease", async () => {
    const queue = "lease-q";
    const { id } = await d.call("push_task", { queue, payload: "p" });
    const claim = await d.call("claim_next_task", { queue, agent_id: "anonymous-worker", lease_seconds: 60 });
    expect(claim).toMatchObject({ claimed: true, id });
    // v2 requeued an unregistered claimant's task within 1 s; wait past that.
    expect(await d.call("claim_next_task", { queue, agent_id: "other", wait_seconds: 2 })).toEqual({ claimed: false });
    expect(await d.call("list_tasks", { queue })).toEqual([expect.objectContaining({ id, state: "claimed", lease_agent: "anonymous-worker" })]);
    expect(await d.call("complete_task", { id, lease_token: claim.lease_token })).toEqual({ completed: true });
  });
});
