// Two real daemons on one PostgreSQL database (docs/cluster.md, issue 11): every primitive must
// behave across them exactly as it does inside one daemon. Exclusive locks with strictly
// increasing fences, FIFO lines whatever daemon each waiter is on, a release on one daemon
// answering a call blocked on the other, distinct counter values, one claimer per task, one
// pool capacity with offers seen from both, path claims refused and granted across them, and
// one change feed. Skipped without a server (AIRLOCK_TEST_PG).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { hostname } from "node:os";
import { OTHERS_GRACE_MS, TURN_STEP_MS } from "../../src/domain/timers.ts";
import { type DaemonProcess, storeQuery } from "../helpers/daemon.ts";
import { answered, doubleGrants, type Hold, median, ordersOfTracedPair, rowBatchHolder, seeded, seenEachOther, tracedDaemons, useCluster } from "../helpers/cluster.ts";
import { describePg, freshDatabase } from "../helpers/pg.ts";
import { track, until } from "../helpers/until.ts";

// A blocked call below may legitimately take a few seconds when a test fails.
setDefaultTimeout(30_000);

// The wait given to calls that must be answered by a hand-off, far beyond answered()'s bound,
// so an answer by the wait's own deadline is never mistaken for a hand-off.
const LONG_WAIT_S = 20;

/**
 * A blocked call, tracked. A test that fails before it awaits the call leaves it pending until
 * the daemons stop, when it fails: marked handled here, so that is no unhandled rejection.
 */
function blocked<T>(p: Promise<T>): ReturnType<typeof track<T>> {
  const t = track(p);
  t.promise.catch(() => undefined);
  return t;
}


interface LockEntry {
  name: string;
  agent_id: string;
  queue_depth: number;
  waiters: { agent_id: string; blocked: boolean }[];
}

async function lockEntry(d: DaemonProcess, name: string): Promise<LockEntry | undefined> {
  return ((await d.call("list_locks")) as LockEntry[]).find((l) => l.name === name);
}

/** What d's status says: the waiters it holds on events and queues, and the wait-for graph. */
interface Status {
  events: { name: string; waiters: number }[];
  queues: { queue: string; waiters: number }[];
  graph: { edges: { agent_id: string; kind: string; blocked: boolean }[] };
}
async function status(d: DaemonProcess): Promise<Status> {
  return (await d.rpc("airlock/status")).result as Status;
}
const eventWaiters = async (d: DaemonProcess, name: string) => (await status(d)).events.find((e) => e.name === name)?.waiters ?? 0;
const queueWaiters = async (d: DaemonProcess, queue: string) => (await status(d)).queues.find((q) => q.queue === queue)?.waiters ?? 0;
/** Whether agent's path claim is blocked, in line in its room, as d sees it. */
const pathBlocked = async (d: DaemonProcess, agent: string) => (await status(d)).graph.edges.some((e) => e.agent_id === agent && e.kind === "path" && e.blocked);

/** Whether agent is in name's line, blocked, as d sees it. */
async function blockedOn(d: DaemonProcess, name: string, agent: string): Promise<boolean> {
  return (await lockEntry(d, name))?.waiters.some((w) => w.agent_id === agent && w.blocked) ?? false;
}

/** The newest revision in db's journal now (a watch_changes from 0 answers only its first page). */
async function newestOf(db: string): Promise<number> {
  return Number((await storeQuery<{ r: string | null }>(db, "SELECT MAX(revision) AS r FROM journal"))[0]!.r ?? 0);
}

describePg("two daemons, one database", () => {
  const c = useCluster(2);
  const d1 = () => c.daemons[0]!;
  const d2 = () => c.daemons[1]!;

  describe("locks", () => {
    test("of 40 concurrent lock_resource calls on one name, alternating between the daemons, exactly one wins", async () => {
      const name = "race";
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 ? d2() : d1()).call("lock_resource", { name, agent_id: `racer-${i}`, ttl_seconds: 60 })),
      );
      const winners = answers.flatMap((a, i) => (a.locked ? [`racer-${i}`] : []));
      expect(winners).toHaveLength(1);
      // Every loser names the one winner, whichever daemon it asked.
      for (const a of answers) if (!a.locked) expect(a.held_by).toBe(winners[0]!);
      expect((await lockEntry(d1(), name))?.agent_id).toBe(winners[0]!);
      expect((await lockEntry(d2(), name))?.agent_id).toBe(winners[0]!);
    });

    test("hand-offs back and forth between the daemons: never two holders, fences strictly increasing", async () => {
      const name = "hand-offs";
      const rng = seeded("lock hand-offs across daemons");
      const GRANTS = 60;
      const holds: Hold[] = [];
      const problems: string[] = [];
      const deadline = performance.now() + 20_000;
      const pick = () => (rng.int(2) ? d2() : d1());
      // Six agents, each asking a daemon chosen at random every time and releasing through
      // either: a grant made by one daemon is released by the other half of the time.
      const worker = async (agent: string) => {
        while (holds.length < GRANTS && performance.now() < deadline) {
          const asked = performance.now();
          const a = await pick().call("lock_resource", { name, agent_id: agent, ttl_seconds: 30, wait_seconds: 1 });
          const from = performance.now();
          if (a.isError) problems.push(`${agent}: lock_resource: ${a.error}`);
          if (!a.locked) continue;
          const hold: Hold = { name, agent, fence: a.fence, from, to: Number.POSITIVE_INFINITY, asked };
          holds.push(hold);
          await Bun.sleep(rng.int(4));
          hold.to = performance.now();
          const r = await pick().call("unlock_resource", { name, lock_token: a.lock_token });
          if (r.released !== true) problems.push(`${agent}: unlock of fence ${a.fence} answered ${JSON.stringify(r)}`);
          else hold.released = performance.now();
        }
      };
      await Promise.all(Array.from({ length: 6 }, (_, i) => worker(`agent-${i}`)));
      expect({ problems: problems.length, first: problems.slice(0, 3) }).toEqual({ problems: 0, first: [] });
      const doubles = doubleGrants(holds);
      expect({ doubleGrants: doubles.length, first: doubles.slice(0, 3) }).toEqual({ doubleGrants: 0, first: [] });
      expect(holds.length).toBeGreaterThanOrEqual(GRANTS);
      // In the order they were held, the fences go up.
      const fences = [...holds].sort((a, b) => a.from - b.from).map((h) => h.fence);
      for (let i = 1; i < fences.length; i++) expect(fences[i]!).toBeGreaterThan(fences[i - 1]!);
    });

    test("a line is one line: its waiters, in arrival order, are the same seen from either daemon", async () => {
      const name = "one-line";
      const h = await d1().call("lock_resource", { name, agent_id: "H", ttl_seconds: 60 });
      expect(h.locked).toBe(true);
      const w1 = d2().call("lock_resource", { name, agent_id: "W1", wait_seconds: 3 });
      await until("W1 blocked on d2", () => blockedOn(d2(), name, "W1"));
      const w2 = d1().call("lock_resource", { name, agent_id: "W2", wait_seconds: 3 });
      await until("W2 blocked on d1", () => blockedOn(d1(), name, "W2"));
      const seen1 = await lockEntry(d1(), name);
      const seen2 = await lockEntry(d2(), name);
      await d1().call("unlock_resource", { name, lock_token: h.lock_token });
      void Promise.allSettled([w1, w2]); // their waits end on their own in 3 s
      const line = [
        { agent_id: "W1", blocked: true },
        { agent_id: "W2", blocked: true },
      ];
      expect({ from: "d1", queue_depth: seen1?.queue_depth, waiters: seen1?.waiters.map(({ agent_id, blocked }) => ({ agent_id, blocked })) }).toEqual({
        from: "d1",
        queue_depth: 2,
        waiters: line,
      });
      expect({ from: "d2", queue_depth: seen2?.queue_depth, waiters: seen2?.waiters.map(({ agent_id, blocked }) => ({ agent_id, blocked })) }).toEqual({
        from: "d2",
        queue_depth: 2,
        waiters: line,
      });
    });

    test("FIFO across daemons: waiters on d2, d1, d2 are granted in arrival order, one release at a time", async () => {
      const name = "fifo";
      const h = await d1().call("lock_resource", { name, agent_id: "H", ttl_seconds: 60 });
      expect(h.locked).toBe(true);
      // Each waiter is in line (on its own daemon, which is where it must show whatever the
      // line's store) before the next one starts.
      const w1 = blocked(d2().call("lock_resource", { name, agent_id: "W1", wait_seconds: LONG_WAIT_S }));
      await until("W1 blocked on d2", () => blockedOn(d2(), name, "W1"));
      const w2 = blocked(d1().call("lock_resource", { name, agent_id: "W2", wait_seconds: LONG_WAIT_S }));
      await until("W2 blocked on d1", () => blockedOn(d1(), name, "W2"));
      const w3 = blocked(d2().call("lock_resource", { name, agent_id: "W3", wait_seconds: LONG_WAIT_S }));
      await until("W3 blocked on d2", () => blockedOn(d2(), name, "W3"));

      expect(await d1().call("unlock_resource", { name, lock_token: h.lock_token })).toEqual({ released: true });
      const g1 = await answered("W1 (blocked on d2) after H released on d1", w1.promise);
      expect({ agent: "W1", ...g1 }).toMatchObject({ agent: "W1", locked: true });
      await Bun.sleep(100);
      expect({ W2settled: w2.settled(), W3settled: w3.settled() }).toEqual({ W2settled: false, W3settled: false });

      expect(await d2().call("unlock_resource", { name, lock_token: g1.lock_token })).toEqual({ released: true });
      const g2 = await answered("W2 (blocked on d1) after W1 released on d2", w2.promise);
      expect({ agent: "W2", ...g2 }).toMatchObject({ agent: "W2", locked: true });
      await Bun.sleep(100);
      expect({ W3settled: w3.settled() }).toEqual({ W3settled: false });

      expect(await d1().call("unlock_resource", { name, lock_token: g2.lock_token })).toEqual({ released: true });
      const g3 = await answered("W3 (blocked on d2) after W2 released on d1", w3.promise);
      expect({ agent: "W3", ...g3 }).toMatchObject({ agent: "W3", locked: true });
      expect([g1.fence, g2.fence, g3.fence]).toEqual([h.fence + 1, h.fence + 2, h.fence + 3]);
      await d2().call("unlock_resource", { name, lock_token: g3.lock_token });
    });

    test("a release on d1 answers the call blocked on d2 (hand-off latency printed, every round must hand off)", async () => {
      const name = "latency";
      const ROUNDS = 20;
      const lags: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const holder = await d1().call("lock_resource", { name, agent_id: "holder", ttl_seconds: 60 });
        expect(holder.locked).toBe(true);
        const waiter = d2().call("lock_resource", { name, agent_id: "waiter", wait_seconds: LONG_WAIT_S });
        await until(`round ${round}: waiter blocked on d2`, () => blockedOn(d2(), name, "waiter"));
        expect(await d1().call("unlock_resource", { name, lock_token: holder.lock_token })).toEqual({ released: true });
        const releasedAt = performance.now();
        const got = await answered(`round ${round}: the waiter on d2 after the release on d1`, waiter);
        lags.push(performance.now() - releasedAt);
        expect({ round, locked: got.locked }).toEqual({ round, locked: true });
        expect(await d2().call("unlock_resource", { name, lock_token: got.lock_token })).toEqual({ released: true });
      }
      const sorted = [...lags].sort((a, b) => a - b);
      console.log(
        `cross-daemon hand-off (unlock answered on d1 → waiter answered on d2), ${ROUNDS} rounds: median ${median(lags).toFixed(2)} ms, ` +
          `min ${sorted[0]!.toFixed(2)} ms, max ${sorted[sorted.length - 1]!.toFixed(2)} ms`,
      );
    });
  });

  test("200 concurrent increment_counter calls split across the daemons get the values 1..200, each once", async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? d2() : d1()).call("increment_counter", { name: "split" })));
    const values = answers.map((a) => a.value as number);
    const seen = new Set(values);
    const repeated = [...seen].filter((v) => values.indexOf(v) !== values.lastIndexOf(v)).sort((a, b) => a - b);
    const missing = Array.from({ length: 200 }, (_, i) => i + 1).filter((v) => !seen.has(v));
    expect({ repeated, missing, highest: Math.max(...values) }).toEqual({ repeated: [], missing: [], highest: 200 });
  });

  test("30 tasks, 6 claimers on each daemon: every task is claimed exactly once", async () => {
    const queue = "shared-q";
    const pushed: number[] = [];
    for (let i = 0; i < 30; i++) pushed.push((await (i % 2 ? d2() : d1()).call("push_task", { queue, payload: `job-${i}` })).id);
    // The queue is shared: a claim on d2 takes the first task, pushed on d1.
    const first = await d2().call("claim_next_task", { queue, agent_id: "c2-first" });
    expect(first).toMatchObject({ claimed: true, id: pushed[0] });
    const claims: { id: number; by: string }[] = [{ id: first.id, by: "c2-first" }];
    const claimer = async (d: DaemonProcess, agent: string) => {
      for (;;) {
        const r = await d.call("claim_next_task", { queue, agent_id: agent });
        if (!r.claimed) return;
        claims.push({ id: r.id, by: agent });
      }
    };
    await Promise.all([...Array.from({ length: 6 }, (_, i) => claimer(d1(), `c1-${i}`)), ...Array.from({ length: 6 }, (_, i) => claimer(d2(), `c2-${i}`))]);
    const ids = claims.map((x) => x.id);
    const claimedTwice = pushed.filter((id) => ids.indexOf(id) !== ids.lastIndexOf(id));
    const neverClaimed = pushed.filter((id) => !ids.includes(id));
    expect({ claims: claims.length, claimedTwice, neverClaimed }).toEqual({ claims: 30, claimedTwice: [], neverClaimed: [] });
  });

  test("wait_for_event blocked on d1 is woken by signal_event on d2, with the generation", async () => {
    // Signalled once first: status lists (and counts the waiters of) events that exist.
    const g0 = (await d2().call("signal_event", { name: "ev-x" })).generation as number;
    const w = blocked(d1().call("wait_for_event", { name: "ev-x", last_seen_generation: g0, wait_seconds: LONG_WAIT_S }));
    await until("the event waiter blocked on d1", async () => (await eventWaiters(d1(), "ev-x")) === 1);
    expect(w.settled()).toBe(false);
    const sig = await d2().call("signal_event", { name: "ev-x" });
    expect(await answered("the event waiter on d1 after a signal on d2", w.promise)).toEqual({ generation: sig.generation, fired: true });
  });

  test("claim_next_task blocked on d1 gets the task pushed on d2; a blocked claimer on d2 whose client left never keeps one", async () => {
    const q = "cross-q";
    // A task pushed and claimed first: status lists (and counts the waiters of) queues with tasks.
    const seed = await d1().call("push_task", { queue: q, payload: "seed" });
    expect(await d1().call("claim_next_task", { queue: q, agent_id: "worker-0" })).toMatchObject({ claimed: true, id: seed.id });
    const w = blocked(d1().call("claim_next_task", { queue: q, agent_id: "worker-1", wait_seconds: LONG_WAIT_S }));
    await until("the claimer blocked on d1", async () => (await queueWaiters(d1(), q)) === 1);
    expect(w.settled()).toBe(false);
    const pushed = await d2().call("push_task", { queue: q, payload: "build it" });
    const got = await answered("the claimer blocked on d1 after a push on d2", w.promise);
    expect(got).toMatchObject({ claimed: true, id: pushed.id, payload: "build it" });

    // A claimer on d2 whose client goes away: a task pushed on d1 afterwards is not lost to it.
    const gone = new AbortController();
    const lost = d2().call("claim_next_task", { queue: q, agent_id: "worker-2", wait_seconds: LONG_WAIT_S }, { signal: gone.signal }).catch(() => "aborted");
    await until("the claimer blocked on d2", async () => (await queueWaiters(d2(), q)) === 1);
    gone.abort();
    expect(await lost).toBe("aborted");
    await until("the claimer gone from d2's line", async () => (await queueWaiters(d2(), q)) === 0, 10_000);
    const second = await d1().call("push_task", { queue: q, payload: "then this" });
    await until("the second task pending, claimable", async () =>
      ((await d2().call("list_tasks", { queue: q })) as { id: number; state: string }[]).some((t) => t.id === second.id && t.state === "pending"),
    );
    expect(await d2().call("claim_next_task", { queue: q, agent_id: "worker-3" })).toMatchObject({ claimed: true, id: second.id });
  });

  test("lock_resources (all-or-nothing, waiting) on d2 takes both names at once when d1's holders release them", async () => {
    const a = await d1().call("lock_resource", { name: "grp-a", agent_id: "holder-a", ttl_seconds: 60 });
    const b = await d1().call("lock_resource", { name: "grp-b", agent_id: "holder-b", ttl_seconds: 60 });
    const g = blocked(d2().call("lock_resources", { names: ["grp-a", "grp-b"], agent_id: "group", ttl_seconds: 60, wait_seconds: LONG_WAIT_S }));
    await until("the group in line on both names", async () => (await blockedOn(d1(), "grp-a", "group")) && (await blockedOn(d1(), "grp-b", "group")));
    await d1().call("unlock_resource", { name: "grp-a", lock_token: a.lock_token });
    // Reserved for the group: a newcomer on d1 does not barge in on the free name.
    expect((await d1().call("lock_resource", { name: "grp-a", agent_id: "newcomer" })).locked).toBe(false);
    expect(g.settled()).toBe(false);
    await d1().call("unlock_resource", { name: "grp-b", lock_token: b.lock_token });
    const got = await answered("the group on d2 after both names were released on d1", g.promise);
    expect(got).toMatchObject({ locked: true });
    expect(Object.keys(got.tokens).sort()).toEqual(["grp-a", "grp-b"]);
  });

  test("one pool for both: a blocked acquire on d2 is granted by a release on d1; an offer to a request on d2 shows on d1 and is claimed with its wake_token", async () => {
    const pool = "team";
    expect(await d1().call("configure_pool", { pool, capacity: 1, expected_version: 0, author: "test", reason: "cluster test" })).toMatchObject({
      configured: true,
    });
    const poolOn = async (d: DaemonProcess) => (await d.call("list_pools")).find((p: { pool: string }) => p.pool === pool);
    expect((await poolOn(d2()))?.capacity).toBe(1);

    const a = await d1().call("acquire_slot", { agent_id: "A", pool, reason: "build" });
    expect(a.granted).toBe(true);
    const b = blocked(d2().call("acquire_slot", { agent_id: "B", pool, reason: "test", wait_seconds: LONG_WAIT_S }));
    await until("B queued (seen from d2)", async () => (await poolOn(d2()))?.waiters?.some((w: { agent_id: string }) => w.agent_id === "B"));
    expect(b.settled()).toBe(false);
    expect(await d1().call("release_slot", { slot_token: a.slot_token })).toEqual({ released: true });
    const bGot = await answered("B's acquire blocked on d2 after A released on d1", b.promise);
    expect({ agent: "B", ...bGot }).toMatchObject({ agent: "B", granted: true, pool });
    expect(await d2().call("release_slot", { slot_token: bGot.slot_token })).toEqual({ released: true });

    // An offer to a request whose call has returned (it keeps working elsewhere).
    const holder = await d1().call("acquire_slot", { agent_id: "D", pool, reason: "build" });
    expect(holder.granted).toBe(true);
    const queued = await d2().call("acquire_slot", { agent_id: "C", pool, reason: "docs" });
    expect(queued).toMatchObject({ granted: false, queue_position: 1 });
    expect(await d1().call("release_slot", { slot_token: holder.slot_token })).toEqual({ released: true });
    const seen = await poolOn(d1());
    expect({ from: "d1", offered: seen?.offered, waiters: seen?.waiters?.map((w: { agent_id: string; state: string }) => ({ agent_id: w.agent_id, state: w.state })) }).toEqual({
      from: "d1",
      offered: 1,
      waiters: [{ agent_id: "C", state: "offered" }],
    });
    const claimed = await d2().call("acquire_slot", { agent_id: "C", pool, wake_token: queued.wake_token });
    expect(claimed).toMatchObject({ granted: true, pool });
    expect(await poolOn(d1())).toMatchObject({ in_use: 1, offered: 0, queued: 0 });
    await d2().call("release_slot", { slot_token: claimed.slot_token });
  });

  test("path claims: an overlapping claim on d2 is refused naming the holder on d1; a blocking one is granted when d1's claim is released", async () => {
    const room = "cluster";
    const a = await d1().call("claim_paths", { agent_id: "A", paths: ["src/api/**"], room, reason: "api refactor" });
    expect(a.granted).toBe(true);
    const refused = await d2().call("claim_paths", { agent_id: "B", paths: ["src/**"], room });
    expect(refused).toMatchObject({ granted: false, conflicts: [{ path: "src/**", held_by: "A", held_path: "src/api/**", reason: "api refactor" }] });
    expect(refused.conflicts[0].witness).toMatch(/^src\/api/);

    const b = blocked(d2().call("claim_paths", { agent_id: "B", paths: ["src/**"], room, wait_seconds: LONG_WAIT_S }));
    await until("B's claim blocked on d2", () => pathBlocked(d2(), "B"));
    expect(b.settled()).toBe(false);
    expect(await d1().call("release_paths", { claim_token: a.claim_token })).toMatchObject({ released: true });
    const got = await answered("B's claim blocked on d2 after A released on d1", b.promise);
    expect({ agent: "B", ...got }).toMatchObject({ agent: "B", granted: true, paths: ["src/**"] });
    expect(got.fence).toBeGreaterThan(a.fence);
  });

  test("the change feed spans the daemons: a watcher on d1 is woken by a change on d2, and both read the same revisions in the same order", async () => {
    const since = (await d1().call("watch_changes", {})).revision as number;
    const watching = blocked(d1().call("watch_changes", { since_revision: since, wait_seconds: LONG_WAIT_S, kinds: ["counter."], resource_prefix: "feed-" }));
    await Bun.sleep(200);
    expect(watching.settled()).toBe(false);
    const made = await d2().call("increment_counter", { name: "feed-a" });
    const woke = await answered("the watcher on d1 after a change on d2", watching.promise);
    expect(woke.changes).toHaveLength(1);
    expect(woke.changes[0]).toMatchObject({ kind: "counter.changed", resource: "feed-a", value: made.value });

    // Changes made through both at once: one feed, one order, whoever reads it.
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? d2() : d1()).call("increment_counter", { name: `feed-${i % 4}` })));
    const view = (r: { changes: { revision: number; kind: string; resource: string; value?: number }[] }) =>
      r.changes.map(({ revision, kind, resource, value }) => ({ revision, kind, resource, value }));
    const from1 = view(await d1().call("watch_changes", { since_revision: since, kinds: ["counter."], resource_prefix: "feed-", limit: 1000 }));
    const from2 = view(await d2().call("watch_changes", { since_revision: since, kinds: ["counter."], resource_prefix: "feed-", limit: 1000 }));
    expect(from1).toHaveLength(21);
    expect(from2).toEqual(from1);
    for (let i = 1; i < from1.length; i++) expect(from1[i]!.revision).toBeGreaterThan(from1[i - 1]!.revision);
  });

  test("counter changes (row bodies, in the shared order) wake watchers on the daemon that made them and on the other", async () => {
    const since = (await d1().call("watch_changes", {})).revision as number;
    const watch = (d: DaemonProcess) => blocked(d.call("watch_changes", { since_revision: since, wait_seconds: LONG_WAIT_S, kinds: ["counter."], resource_prefix: "rows-" }));
    const here = watch(d1());
    const there = watch(d2());
    await Bun.sleep(300); // both blocked by now (if not, each finds the change when it reads)
    expect(here.settled() || there.settled()).toBe(false);
    const made = await d1().call("increment_counter", { name: "rows-a" });
    for (const [who, w] of [["d1 (the daemon that made it)", here], ["d2", there]] as const) {
      const woke = await answered(`the watcher on ${who}`, w.promise);
      expect(woke.changes).toHaveLength(1);
      expect(woke.changes[0]).toMatchObject({ kind: "counter.changed", resource: "rows-a", value: made.value });
    }
  });

  test("heartbeats on d2 keep alive an agent registered on d1 (they move no version); when they stop, its lock goes to a waiter on d1", async () => {
    // ttl 2 s, a heartbeat every 0.5 s on d2 for 4 s: d1's timer for the first expiry fires
    // meanwhile, finds the row moved, and watches the new one.
    expect((await d1().call("register_agent", { agent_id: "beating", ttl_seconds: 2 })).registered).toBe(true);
    const held = await d1().call("lock_resource", { name: "beat-lock", agent_id: "beating", ttl_seconds: 60 });
    expect(held.locked).toBe(true);
    const waiter = blocked(d1().call("lock_resource", { name: "beat-lock", agent_id: "beat-waiter", ttl_seconds: 60, wait_seconds: LONG_WAIT_S }));
    for (let i = 0; i < 8; i++) {
      expect((await d2().call("register_agent", { agent_id: "beating", ttl_seconds: 2 })).registered).toBe(true);
      await Bun.sleep(500);
    }
    expect(waiter.settled()).toBe(false); // 4 s after a 2 s registration, still alive
    expect(((await d1().call("list_agents")) as { agent_id: string }[]).map((a) => a.agent_id)).toContain("beating");
    // The heartbeats stop: the lapse frees the lock, on whichever daemon fires first.
    const got = await answered("the waiter on d1 once the heartbeats on d2 stopped", waiter.promise, 10_000);
    expect(got.locked).toBe(true);
    expect(got.fence).toBeGreaterThan(held.fence);
  });

  test("a counter and an agent of the same name, on both daemons at once in opposite orders, never deadlock (row bodies lock rows in one order)", async () => {
    // Row bodies run in the order of their keys, so two batches lock their rows in one order.
    // A counter and an agent both named "twin" are two rows: were their keys the bare name,
    // each batch would keep them in the order they were asked, and d1 (counter, then agent)
    // and d2 (agent, then counter) could each hold one row and wait for the other, until
    // PostgreSQL failed one call as a deadlock. Other counters keep both connections busy, so
    // the pairs are gathered into batches.
    expect((await d1().call("register_agent", { agent_id: "twin", ttl_seconds: 600 })).registered).toBe(true);
    const ROUNDS = 400;
    let busy = true;
    const load = [d1(), d2()].flatMap((d, i) =>
      Array.from({ length: 4 }, async (_, j) => {
        while (busy) await d.call("increment_counter", { name: `twin-load-${i}-${j}` });
      }),
    );
    const failures: string[] = [];
    const values: number[] = [];
    // A failed call is noted; a counter's value is kept.
    const answer = (what: string) => (r: { isError?: boolean; value?: number }) => {
      if (r.isError) failures.push(`${what}: ${JSON.stringify(r)}`);
      else if (r.value !== undefined) values.push(r.value);
    };
    try {
      for (let round = 0; round < ROUNDS && failures.length === 0; round++) {
        await Promise.all([
          d1().call("increment_counter", { name: "twin" }).then(answer("d1 counter")),
          d1().call("register_agent", { agent_id: "twin", ttl_seconds: 600 }).then(answer("d1 heartbeat")),
          d2().call("register_agent", { agent_id: "twin", ttl_seconds: 600 }).then(answer("d2 heartbeat")),
          d2().call("increment_counter", { name: "twin" }).then(answer("d2 counter")),
        ]);
      }
    } finally {
      busy = false;
      await Promise.all(load);
    }
    expect(failures).toEqual([]);
    expect(values.sort((a, b) => a - b)).toEqual(Array.from({ length: ROUNDS * 2 }, (_, i) => i + 1));
  });

  test("set_note_if on both daemons at once (row bodies, side by side): for each key exactly one contender wins each round, and both daemons read its value", async () => {
    // Notes are row bodies: swaps on both daemons run beside each other, so only the row's
    // lock orders two swaps of one key. Each round, eight contenders (four on each daemon) swap
    // from the value the last round's winner wrote, on four keys at once.
    const KEYS = 4;
    const CONTENDERS = 8;
    const current = Array.from({ length: KEYS }, () => "");
    for (let round = 0; round < 12; round++) {
      const swaps = await Promise.all(
        Array.from({ length: KEYS * CONTENDERS }, async (_, n) => {
          const k = n % KEYS;
          const value = `r${round}-c${n}`;
          // Contenders n and n + KEYS share a key and sit on different daemons.
          const r = await (Math.floor(n / KEYS) % 2 === 0 ? d1() : d2()).call("set_note_if", { key: `cas-${k}`, expected_value: current[k], new_value: value, author: `c${n}` });
          expect(r.isError).toBeUndefined();
          return { k, value, swapped: r.swapped as boolean };
        }),
      );
      for (let k = 0; k < KEYS; k++) {
        const won = swaps.filter((s) => s.k === k && s.swapped);
        expect(won.length).toBe(1);
        current[k] = won[0]!.value;
        for (const d of [d1(), d2()]) expect((await d.call("get_note", { key: `cas-${k}` })).value).toBe(current[k]);
      }
    }
  });

  test("a slot bound to a process on another machine is judged there only: no daemon here releases it, while one bound here is", async () => {
    // A real process of this machine holds a bound slot; then its row is made to say it runs
    // elsewhere (as a daemon on another machine would have written it) and the process ends.
    await d1().call("configure_pool", { pool: "bound-x", capacity: 2, expected_version: 0, author: "test", reason: "two bound slots" });
    const spawnSleeper = () => Bun.spawn(["sleep", "60"], { detached: true, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    const far = spawnSleeper();
    const near = spawnSleeper();
    try {
      const a = await d1().call("acquire_slot", { pool: "bound-x", agent_id: "far-agent", pid: far.pid, reason: "far" });
      const b = await d2().call("acquire_slot", { pool: "bound-x", agent_id: "near-agent", pid: near.pid, reason: "near" });
      expect([a.granted, b.granted]).toEqual([true, true]);
      await storeQuery(c.db, "UPDATE slots SET pid_start = replace(pid_start, ?, ?) WHERE pid = ?", `@${hostname()}`, "@build-box-7", far.pid);
      far.kill(9);
      near.kill(9);
      const holders = async () => ((await d1().call("list_pools")) as { pool: string; holders: { agent_id: string }[] }[]).find((p) => p.pool === "bound-x")!.holders.map((h) => h.agent_id);
      await until("the near slot released when its process exited", async () => !(await holders()).includes("near-agent"), 5000);
      await Bun.sleep(1000); // four more checks by each daemon
      expect(await holders()).toEqual(["far-agent"]);
    } finally {
      far.kill(9);
      near.kill(9);
    }
  });
});

// A cluster of its own: the tests below assert that no line body ran in a window (no version
// moved), or hold a row batch open (an exclusive transaction asked for meanwhile would queue
// every later one behind it); a timer left by another test firing (a lock's expiry, a waiter's
// grace ending) would do either.
describePg("two daemons, one database: row bodies and reads in the shared order", () => {
  const c = useCluster(2);
  const d1 = () => c.daemons[0]!;
  const d2 = () => c.daemons[1]!;
  /** The cluster version: a transaction in the global order (a line body) that wrote moves it, a row body never. */
  const version = async () => Number((await storeQuery<{ version: string }>(c.db, "SELECT version FROM airlock_sync WHERE id = 1"))[0]!.version);
  /** The versions moved since v, each with the tables it wrote (empty: none moved): a failure names what did. */
  const movedSince = async (v: number) =>
    (await storeQuery<{ version: string; tables: string }>(c.db, "SELECT version, tables FROM airlock_changes WHERE version > ? ORDER BY version", v)).map((r) => `${r.version}: ${r.tables}`);
  const newest = () => newestOf(c.db);
  // Every test here moves no version in a window of its own, so none may leave a timer that
  // fires inside another's: what they leave held lasts longer than the whole describe.

  test("signal_event and clear_event with nobody waiting are row bodies on both daemons (no version moves): each generation is handed out once, and a look (wait_seconds 0) reads the row", async () => {
    expect(await d1().call("signal_event", { name: "ev-rows" })).toEqual({ generation: 1 });
    const before = await version();
    const generations = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? d1() : d2()).call("signal_event", { name: "ev-rows" }).then((r) => r.generation as number)));
    expect(generations.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    expect(await d2().call("wait_for_event", { name: "ev-rows", last_seen_generation: 20, wait_seconds: 0 })).toEqual({ generation: 21, fired: true });
    expect(await d1().call("wait_for_event", { name: "ev-rows", last_seen_generation: 21, wait_seconds: 0 })).toEqual({ generation: 21, fired: false });
    expect(await d2().call("clear_event", { name: "ev-rows" })).toEqual({ cleared: true });
    expect(await d1().call("wait_for_event", { name: "ev-rows", last_seen_generation: 0, wait_seconds: 0 })).toEqual({ generation: 0, fired: false });
    expect(await movedSince(before)).toEqual([]); // 20 signals, two looks and a clear: none was a line body

    // With a waiter blocked on d2, a signal on d1 (whose memory has not seen that line) wakes it:
    // the row body finds the stored line and leaves the call to the line body.
    expect(await d2().call("signal_event", { name: "ev-rows" })).toEqual({ generation: 1 }); // status lists events that exist
    const w = blocked(d2().call("wait_for_event", { name: "ev-rows", last_seen_generation: 1, wait_seconds: LONG_WAIT_S }));
    await until("the event waiter blocked on d2", async () => (await eventWaiters(d2(), "ev-rows")) === 1);
    expect(await d1().call("signal_event", { name: "ev-rows" })).toEqual({ generation: 2 });
    expect(await answered("the event waiter on d2 after a signal on d1", w.promise)).toEqual({ generation: 2, fired: true });

    // A clear the same way: its row body's delete holds the condition that nobody stands in the
    // stored line, and its answer says so, so the line body wakes the waiter on d2.
    const c2 = blocked(d2().call("wait_for_event", { name: "ev-rows", last_seen_generation: 2, wait_seconds: LONG_WAIT_S }));
    await until("the event waiter blocked on d2 again", async () => (await eventWaiters(d2(), "ev-rows")) === 1);
    expect(await d1().call("clear_event", { name: "ev-rows" })).toEqual({ cleared: true });
    expect(await answered("the event waiter on d2 after a clear on d1", c2.promise)).toEqual({ generation: 0, fired: false });

    // An event never signaled, nobody waiting: no row to delete, and still a row body, recorded once.
    const since = await newest();
    const quiet = await version();
    expect(await d2().call("clear_event", { name: "ev-never" })).toEqual({ cleared: true });
    expect(await movedSince(quiet)).toEqual([]);
    const entries = (await d1().call("watch_changes", { since_revision: since, kinds: ["event."] })).changes as { kind: string; resource: string }[];
    expect(entries.map((e) => `${e.kind} ${e.resource}`)).toEqual(["event.cleared ev-never"]);
  });

  test("push_task, claim_next_task and complete_task with no claimer waiting are row bodies on both daemons (no version moves): claims racing on both daemons take each task once", async () => {
    const q = "rows-q";
    const before = await version();
    const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? d1() : d2()).call("push_task", { queue: q, payload: `job-${i}` }).then((r) => r.id as number)));
    expect(new Set(ids).size).toBe(12);

    // 20 claimers at once, half on each daemon, for 12 tasks: each task is taken once, and the
    // claimers that lost a race for a task take another or hear there is none (the line body).
    const got = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? d2() : d1()).call("claim_next_task", { queue: q, agent_id: `rows-worker-${i}`, wait_seconds: 0 })));
    const claims = got.filter((t) => t.claimed === true) as { id: number; lease_token: string }[];
    expect(claims.map((t) => t.id).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
    expect(got.filter((t) => t.claimed === false)).toHaveLength(8);
    const done = await Promise.all(claims.map((t, i) => (i % 2 === 0 ? d1() : d2()).call("complete_task", { id: t.id, lease_token: t.lease_token })));
    expect(done.every((r) => r.completed === true)).toBe(true);
    // A second completion of the same lease, on the other daemon, is refused: the row moved once.
    expect(await d2().call("complete_task", { id: claims[0]!.id, lease_token: claims[0]!.lease_token })).toEqual({ completed: false });
    const listed = (await d1().call("list_tasks", { queue: q })) as { id: number; state: string }[];
    expect(listed.map((t) => [t.id, t.state])).toEqual([...ids].sort((a, b) => a - b).map((id) => [id, "done"]));
    console.log(`row-body tasks: 12 pushes, 20 racing claims, 13 completions; versions moved ${(await version()) - before} (claims that lost a race end in a line body)`);

    // One at a time, each on the other daemon: a push, its claim, its completion and a claim of
    // the empty queue (wait_seconds 0) are row bodies: none moves the version.
    const mid = await version();
    const one = await d1().call("push_task", { queue: q, payload: "one" });
    const claim = await d2().call("claim_next_task", { queue: q, agent_id: "rows-one", wait_seconds: 0 });
    expect(claim).toMatchObject({ claimed: true, id: one.id });
    expect(await d1().call("complete_task", { id: claim.id, lease_token: claim.lease_token })).toEqual({ completed: true });
    expect(await d2().call("claim_next_task", { queue: q, agent_id: "rows-late", wait_seconds: 0 })).toEqual({ claimed: false });
    expect(await movedSince(mid)).toEqual([]);
  });

  test("renew_task and fail_task are row bodies on either daemon (no version moves); a requeue to a claimer blocked on the other daemon hands the task over; a lapsed lease is expired once, never renewed", async () => {
    const q = "rows-lease";
    const mid = await version();
    const a = await d1().call("push_task", { queue: q, payload: "a" });
    const b = await d2().call("push_task", { queue: q, payload: "b", max_attempts: 1 });
    const ca = await d1().call("claim_next_task", { queue: q, agent_id: "lease-w1", lease_seconds: 60 });
    const cb = await d2().call("claim_next_task", { queue: q, agent_id: "lease-w2", lease_seconds: 60 });
    expect([ca.id, cb.id]).toEqual([a.id, b.id]);
    // Renewed on the other daemon, by its token only; a wrong token is refused (the line body says why).
    expect(await d2().call("renew_task", { id: a.id, lease_token: ca.lease_token, lease_seconds: 90 })).toMatchObject({ renewed: true });
    expect(await d1().call("renew_task", { id: a.id, lease_token: cb.lease_token })).toEqual({ renewed: false, error: "store: task not owned by supplied lease_token" });
    // Failed on the other daemon, the two at once: a's goes back to pending, b's (out of
    // attempts) to failed; a second failure of a's lease is refused.
    expect(await Promise.all([d2().call("fail_task", { id: a.id, lease_token: ca.lease_token }), d1().call("fail_task", { id: b.id, lease_token: cb.lease_token })])).toEqual([{ failed: true }, { failed: true }]);
    expect(await d1().call("fail_task", { id: a.id, lease_token: ca.lease_token })).toEqual({ failed: false });
    const states = async () => ((await d2().call("list_tasks", { queue: q })) as { id: number; state: string }[]).map((t) => [t.id, t.state]);
    expect(await states()).toEqual([[a.id, "pending"], [b.id, "failed"]]);
    // Moved no version, the refusals included (line bodies that wrote nothing).
    expect(await movedSince(mid)).toEqual([]);

    // A claimer blocked on d1: a's next lease, failed with requeue on d2, goes to it (the line body).
    const again = await d2().call("claim_next_task", { queue: q, agent_id: "lease-w3", lease_seconds: 60 });
    expect(again).toMatchObject({ claimed: true, id: a.id });
    const w = blocked(d1().call("claim_next_task", { queue: q, agent_id: "lease-w4", lease_seconds: 600, wait_seconds: LONG_WAIT_S }));
    await until("the claimer blocked on d1", async () => (await queueWaiters(d1(), q)) === 1);
    expect(await d2().call("fail_task", { id: a.id, lease_token: again.lease_token })).toEqual({ failed: true });
    expect(await answered("the claimer on d1 after a requeue on d2", w.promise)).toMatchObject({ claimed: true, id: a.id });

    // A lease of one second, renewed on the other daemon after it lapsed: refused whichever
    // daemon expires it (d1's timer, or d2's call finding it due), and expired exactly once.
    const since = await newest();
    const c = await d1().call("push_task", { queue: q, payload: "c" });
    const cc = await d1().call("claim_next_task", { queue: q, agent_id: "lease-w5", lease_seconds: 1 });
    expect(cc.id).toBe(c.id);
    await Bun.sleep(1_100);
    expect((await d2().call("renew_task", { id: c.id, lease_token: cc.lease_token })).renewed).toBe(false);
    expect(await d2().call("complete_task", { id: c.id, lease_token: cc.lease_token })).toEqual({ completed: false });
    expect((await states()).find(([id]) => id === c.id)).toEqual([c.id, "pending"]);
    const feed = (await d2().call("watch_changes", { since_revision: since, kinds: ["task."], limit: 100 })).changes as { kind: string; id?: number }[];
    expect(feed.filter((e) => e.kind === "task.expired" && e.id === c.id)).toHaveLength(1);
    expect(feed.filter((e) => e.kind === "task.renewed" && e.id === c.id)).toHaveLength(0);
  });

  test("first registrations are row bodies too: 16 agents registered on both daemons at once (each twice) move no version, and each is recorded registered once; after it departs, once more", async () => {
    const since = await newest();
    const before = await version();
    const names = Array.from({ length: 16 }, (_, i) => `first-${i}`);
    const calls = names.flatMap((n, i) => [d1(), d2()].map((d, j) => d.call("register_agent", { agent_id: n, ttl_seconds: 600, ...(i % 2 === j ? { role: "builder" } : {}) })));
    expect((await Promise.all(calls)).every((r) => r.registered === true)).toBe(true);
    expect(await movedSince(before)).toEqual([]);
    const registered = async () =>
      ((await d2().call("watch_changes", { since_revision: since, kinds: ["agent.registered"], limit: 1000 })).changes as { resource: string }[]).map((e) => e.resource).sort();
    expect(await registered()).toEqual([...names].sort());
    const listed = ((await d1().call("list_agents")) as { agent_id: string; role: string | null }[]).filter((a) => a.agent_id.startsWith("first-"));
    expect(listed.map((a) => [a.agent_id, a.role])).toEqual([...names].sort().map((n) => [n, "builder"]));
    // Departed (a line body: its locks and claims go), then registered again on the other daemon.
    await d1().call("unregister_agent", { agent_id: "first-0" });
    expect((await d2().call("register_agent", { agent_id: "first-0", ttl_seconds: 600 })).registered).toBe(true);
    expect(await registered()).toEqual(["first-0", ...names].sort());
  });

  test("the hooks' delivery at a tool boundary is a row body on either daemon (no version moves): 12 messages, asked of both daemons at once four times, each shown once", async () => {
    expect((await d1().call("register_agent", { agent_id: "inbox-agent", ttl_seconds: 600 })).registered).toBe(true);
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push((await (i % 2 ? d2() : d1()).call("send_message", { from: "inbox-writer", to: ["inbox-agent"], body: `note ${i}` })).message_id);
    const mid = await version();
    const deliver = (d: DaemonProcess) => d.rpc("airlock/deliver", { agent_id: "inbox-agent", point: "tool" });
    const rounds = await Promise.all([deliver(d1()), deliver(d2()), deliver(d1()), deliver(d2())]);
    const shown = rounds.flatMap((r) => (r.result.messages as { id: number }[]).map((m) => m.id)).sort((a, b) => a - b);
    expect(shown).toEqual(ids);
    expect((await deliver(d2())).result.messages).toEqual([]);
    expect(await movedSince(mid)).toEqual([]);
  });

  test("send_message to named agents nobody waits on is a row body on either daemon (no version moves); a reader blocked on the other daemon is woken by the line body; a name nobody knows is refused", async () => {
    expect((await d1().call("register_agent", { agent_id: "mail-to", ttl_seconds: 600 })).registered).toBe(true);
    const mid = await version();
    const sent = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? d2() : d1()).call("send_message", { from: `mail-from-${i}`, to: ["mail-to"], body: `note ${i}` })));
    expect(new Set(sent.map((m) => m.message_id)).size).toBe(6);
    expect(await movedSince(mid)).toEqual([]);
    const read = await d2().call("read_messages", { agent_id: "mail-to" });
    expect((read.messages as { body: string }[]).map((m) => m.body).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `note ${i}`));

    // A reader blocked on d1: a send on d2 wakes it.
    const waiting = blocked(d1().call("read_messages", { agent_id: "mail-to", wait_seconds: LONG_WAIT_S }));
    await until("the reader blocked on d1", async () => ((await storeQuery<{ n: string }>(c.db, "SELECT count(*) AS n FROM waiters WHERE queue = 'message'"))[0]!.n === "1"), 5000);
    await d2().call("send_message", { from: "mail-from-late", to: ["mail-to"], body: "late" });
    expect(((await answered("the reader on d1 after a send on d2", waiting.promise)).messages as { body: string }[]).map((m) => m.body)).toEqual(["late"]);
    expect((await d2().call("send_message", { from: "mail-from-x", to: ["nobody-anywhere"], body: "x" })).error).toContain("unknown agent");
  });

  test("locks on distinct names, taken and released on both daemons with nobody in line, are row bodies: they move no version; a line still hands off across daemons", async () => {
    const agents = Array.from({ length: 16 }, (_, i) => `alone-agent-${i}`);
    // A first call of an agent registers it, in the global order: done before counting.
    for (const id of ["intruder", ...agents]) await d1().call("register_agent", { agent_id: id, ttl_seconds: 600 });
    const before = await version();
    const fences = await Promise.all(
      agents.map(async (agent, i) => {
        const d = i % 2 === 0 ? d1() : d2();
        const got: number[] = [];
        for (let n = 0; n < 5; n++) {
          const g = await d.call("lock_resource", { name: `alone-${i}`, agent_id: agent, ttl_seconds: 60 });
          expect(g.locked).toBe(true);
          got.push(g.fence);
          expect((await d.call("unlock_resource", { name: `alone-${i}`, lock_token: g.lock_token })).released).toBe(true);
        }
        return got;
      }),
    );
    for (const got of fences) expect(got).toEqual([1, 2, 3, 4, 5]);
    // 80 locks taken and released (a batch with a line body in it would have moved it).
    expect(await movedSince(before)).toEqual([]);

    // The line bodies still see what the row bodies did: the other daemon refuses a lock held
    // that way, and a second release of its token is refused.
    const g = await d1().call("lock_resource", { name: "alone-0", agent_id: agents[0], ttl_seconds: 60 });
    expect(g).toMatchObject({ locked: true, fence: 6 });
    expect(await d2().call("lock_resource", { name: "alone-0", agent_id: "intruder", ttl_seconds: 60 })).toMatchObject({ locked: false, held_by: agents[0] });
    expect((await d1().call("unlock_resource", { name: "alone-0", lock_token: g.lock_token })).released).toBe(true);
    expect((await d2().call("unlock_resource", { name: "alone-0", lock_token: g.lock_token })).released).toBe(false);

    // With a waiter on d2, d1's release of a lock it took as a row body is a line body: a hand-off.
    const held = await d1().call("lock_resource", { name: "alone-then-line", agent_id: "first", ttl_seconds: 600 });
    expect(held.locked).toBe(true);
    const waiter = blocked(d2().call("lock_resource", { name: "alone-then-line", agent_id: "second", ttl_seconds: 600, wait_seconds: LONG_WAIT_S }));
    await until("the waiter on d2 in line", async () => (await lockEntry(d1(), "alone-then-line"))?.queue_depth === 1, 5000);
    expect((await d1().call("unlock_resource", { name: "alone-then-line", lock_token: held.lock_token })).released).toBe(true);
    const got = await answered("the waiter on d2 after d1's release", waiter.promise, 10_000);
    expect(got).toMatchObject({ locked: true, fence: held.fence + 1 });
  });

  test("renew_lock on d2 of a lock taken on d1 is a row body (no version moves); d1's timer finds the row moved, and the renewed expiry hands the lock to a waiter on d1", async () => {
    const held = await d1().call("lock_resource", { name: "renewed-elsewhere", agent_id: "renewer", ttl_seconds: 2 });
    expect(held.locked).toBe(true);
    const waiter = blocked(d1().call("lock_resource", { name: "renewed-elsewhere", agent_id: "renew-waiter", ttl_seconds: 600, wait_seconds: LONG_WAIT_S }));
    await until("the waiter on d1 in line", async () => (await lockEntry(d1(), "renewed-elsewhere"))?.queue_depth === 1, 5000);
    const before = await version();
    const renewed = await d2().call("renew_lock", { name: "renewed-elsewhere", lock_token: held.lock_token, ttl_seconds: 8 });
    expect(renewed.renewed).toBe(true);
    expect(await movedSince(before)).toEqual([]);
    // Past the first expiry (2 s): d1's timer fired, found the row moved, and did nothing.
    await Bun.sleep(2500);
    expect(waiter.settled()).toBe(false);
    expect((await lockEntry(d1(), "renewed-elsewhere"))?.agent_id).toBe("renewer");
    // The renewed expiry, armed on d2, frees it to d1's waiter.
    const got = await answered("the waiter on d1 once the renewed lock expired", waiter.promise, 10_000);
    expect(got).toMatchObject({ locked: true, fence: held.fence + 1 });
    // A wrong token is refused by the line body, with its reason.
    expect(await d2().call("renew_lock", { name: "renewed-elsewhere", lock_token: held.lock_token, ttl_seconds: 4 })).toMatchObject({ renewed: false, error: "store: lock not owned by supplied token" });
  });


  test("check_paths on d2 sees a claim made on d1, and its release, as a row body: it answers while a row batch holds the order shared, where a line body waits", async () => {
    const batch = await rowBatchHolder(c.db);
    const room = "shared-check";
    try {
      const claim = await d1().call("claim_paths", { agent_id: "editor-1", room, paths: ["src/api/**"], ttl_seconds: 600 });
      expect(claim.granted).toBe(true);
      await batch.hold();
      const seen = await d2().call("check_paths", { agent_id: "editor-2", room, paths: ["src/api/users.ts"] });
      expect(seen).toMatchObject({ clear: false, conflicts: [{ held_by: "editor-1", held_path: "src/api/**", witness: "src/api/users.ts" }] });
      // A line body on d2 waits for the row batch meanwhile.
      const line = blocked(d2().call("claim_paths", { agent_id: "editor-2", room, paths: ["docs/**"], ttl_seconds: 600 }));
      await Bun.sleep(300);
      expect(line.settled()).toBe(false);
      await batch.commit();
      expect(await answered("the claim on d2 once the row batch committed", line.promise)).toMatchObject({ granted: true });
      // Released on d1: d2's next check finds the region clear, and d1's finds d2's claim.
      expect(await d1().call("release_paths", { claim_token: claim.claim_token })).toMatchObject({ released: true });
      expect(await d2().call("check_paths", { agent_id: "editor-2", room, paths: ["src/api/users.ts"] })).toMatchObject({ clear: true, conflicts: [] });
      expect(await d1().call("check_paths", { agent_id: "editor-1", room, paths: ["docs/a.md"] })).toMatchObject({ clear: false, conflicts: [{ held_by: "editor-2" }] });
    } finally {
      await batch.close();
    }
  });

  test("list_notes on d2 is a read in the shared order: it answers while a row batch holds the order, with the notes set on d1", async () => {
    const batch = await rowBatchHolder(c.db);
    try {
      expect(await d1().call("set_note", { key: "listed-kept", value: "v" })).toMatchObject({ saved: true });
      expect(await d1().call("set_note", { key: "listed-other", value: "w" })).toMatchObject({ saved: true });
      await batch.hold();
      const listed = (await answered("list_notes on d2 beside a held row batch", d2().call("list_notes"))) as { key: string }[];
      expect(listed.map((n) => n.key).filter((k) => k.startsWith("listed-"))).toEqual(["listed-kept", "listed-other"]);
    } finally {
      await batch.close();
    }
  });

  test("a look at the journal beside a writer in flight stops before its revision; the next look waits for it, and passes it once it rolled back", async () => {
    const batch = await rowBatchHolder(c.db);
    try {
      await d1().call("increment_counter", { name: "gap-before" });
      const before = await newest();
      // A row batch of some daemon, in flight: the order taken shared, a revision taken, not committed.
      await batch.hold();
      const held = Number(((await batch.tx.unsafe("INSERT INTO journal (at, kind, resource) VALUES (0, 'counter.changed', 'gap-held') RETURNING revision")) as { revision: string }[])[0]!.revision);
      const after = await d1().call("increment_counter", { name: "gap-after" });
      const afterRev = await newest();
      expect([held, afterRev]).toEqual([before + 1, before + 2]);
      // A look on either daemon from just before the last committed change: that change, and
      // not the one after the revision in flight; it answers the cut, so nothing is skipped.
      for (const d of [d1(), d2()]) {
        const look = await d.call("watch_changes", { since_revision: before - 1 });
        expect(look.changes.map((e: { revision: number }) => e.revision)).toEqual([before]);
        expect(look.revision).toBe(before);
        // Filtered (the database applies the filter, and finds where the run of revisions ends): the same cut.
        const filtered = await d.call("watch_changes", { since_revision: before - 1, kinds: ["counter."], resource_prefix: "gap-" });
        expect([filtered.changes.map((e: { revision: number }) => e.revision), filtered.revision]).toEqual([[before], before]);
        const other = await d.call("watch_changes", { since_revision: before - 1, kinds: ["counter."], resource_prefix: "gap-b" });
        expect([other.changes.map((e: { revision: number }) => e.revision), other.revision]).toEqual([[before], before]);
      }
      // From the cut: the next revision is missing and a later one is there, so the look reads
      // in the exclusive order, which waits for the writer.
      const waiting = blocked(d2().call("watch_changes", { since_revision: before }));
      await Bun.sleep(300);
      expect(waiting.settled()).toBe(false);
      await batch.rollback();
      const got = await answered("the look once the writer rolled back", waiting.promise);
      expect(got.changes.map((e: { revision: number; resource: string; value?: number }) => [e.revision, e.resource, e.value])).toEqual([[afterRev, "gap-after", after.value]]);
      expect(got.revision).toBe(afterRev);
    } finally {
      await batch.close();
    }
  });

  // A watcher blocked on d2 used to send every batch of row bodies that recorded a change, of
  // either daemon, through a catch-up in the exclusive order on d2, which stopped every daemon's
  // row bodies for it (docs/cluster.md, "Watchers beside row bodies"). Here that catch-up would
  // wait for the row batch the test holds open, and the next call on d2 behind it.
  test("a blocked watcher does not send row bodies through the exclusive order: changes it does not want answer beside a row batch held open; the one it wants wakes it once the batch ends", async () => {
    const batch = await rowBatchHolder(c.db);
    try {
      const since = (await d2().call("watch_changes", {})).revision as number;
      const watching = blocked(d2().call("watch_changes", { since_revision: since, wait_seconds: LONG_WAIT_S, kinds: ["counter."], resource_prefix: "wanted-" }));
      await Bun.sleep(300);
      expect(watching.settled()).toBe(false);
      await batch.hold();
      // Changes it does not want, made on d2 and on d1 in turn, each answered before the next.
      for (let i = 0; i < 4; i++) {
        for (const [name, d] of [["d2", d2()], ["d1", d1()]] as const) {
          const made = await answered(`an unwanted change on ${name} while a row batch is held`, d.call("increment_counter", { name: `unwanted-${i}-${name}` }));
          expect(made.value).toBe(1);
        }
        await Bun.sleep(50); // d1's word of its change reaches d2, which looks for its watcher
      }
      expect(watching.settled()).toBe(false);
      // One it wants, made on d1: woken by a catch-up in the exclusive order, after the held batch.
      const made = await answered("the wanted change on d1", d1().call("increment_counter", { name: "wanted-a" }));
      await Bun.sleep(300);
      expect(watching.settled()).toBe(false);
      await batch.rollback();
      const woke = await answered("the watcher on d2 once the held batch ended", watching.promise);
      expect(woke.changes.map((e: { resource: string; value?: number }) => [e.resource, e.value])).toEqual([["wanted-a", made.value]]);
    } finally {
      await batch.close();
    }
  });

  // The place changes daemon (a row of d1's becomes d2's): d1 must hear of it at once, though it
  // makes no call (a change of a daemon's own places only does not send the others to catch up,
  // `own_waiters` in its NOTIFY). Here, where no timer of an earlier test fires meanwhile (one
  // would have d1 catch up for its own reasons).
  test("a call blocked on d1 resumed on d2 with its wake_token: the one on d1 is answered at once, the one on d2 keeps the place and is granted at the release", async () => {
    const held = await d1().call("lock_resource", { name: "moved-place", agent_id: "H", ttl_seconds: 60 });
    expect(held.locked).toBe(true);
    const first = await d1().call("lock_resource", { name: "moved-place", agent_id: "A", ttl_seconds: 60, wait_seconds: 0.2 });
    expect(first).toMatchObject({ locked: false, held_by: "H" });
    const on1 = blocked(d1().call("lock_resource", { name: "moved-place", agent_id: "A", ttl_seconds: 60, wait_seconds: LONG_WAIT_S, wake_token: first.wake_token }));
    await until("A blocked on d1", () => blockedOn(d1(), "moved-place", "A"), 5_000);
    const on2 = blocked(d2().call("lock_resource", { name: "moved-place", agent_id: "A", ttl_seconds: 60, wait_seconds: LONG_WAIT_S, wake_token: first.wake_token }));
    const left = await answered("the call on d1 once its place moved to d2", on1.promise);
    expect(left.locked).toBe(false);
    expect(on2.settled()).toBe(false);
    expect((await d1().call("unlock_resource", { name: "moved-place", lock_token: held.lock_token })).released).toBe(true);
    const got = await answered("the call on d2 at the release on d1", on2.promise);
    expect(got).toMatchObject({ locked: true });
    expect((await d2().call("unlock_resource", { name: "moved-place", lock_token: got.lock_token })).released).toBe(true);
  });

  // The check of a slot bound to a process (every 250 ms, on the machine that runs it) used to
  // run in the global order each time: four exclusive turns a second for each bound build, each
  // stopping every daemon's row bodies (docs/cluster.md, "Periodic checks"). Here such a turn
  // would wait for the row batch the test holds, and every later call of d1 behind it.
  test("a process-bound slot is checked in the shared order: calls on both daemons answer beside a row batch held open through a dozen checks; once the process exits, the slot is released when the batch ends", async () => {
    const batch = await rowBatchHolder(c.db);
    const sleeper = Bun.spawn(["sleep", "60"], { detached: true, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    const held = async () => Number((await storeQuery<{ n: string }>(c.db, "SELECT count(*) AS n FROM slots WHERE pool = ?", "watched-box"))[0]!.n);
    try {
      // Each daemon has seen the other come; the line bodies below on d1 run what that left for it.
      await seenEachOther(c.db);
      await d1().call("configure_pool", { pool: "watched-box", capacity: 1, expected_version: 0, author: "test", reason: "one bound slot" });
      expect((await d1().call("acquire_slot", { pool: "watched-box", agent_id: "bound-builder", pid: sleeper.pid, reason: "a build" })).granted).toBe(true);
      await batch.hold();
      const end = performance.now() + 3000; // a dozen checks
      for (let i = 0; performance.now() < end; i++) {
        for (const [name, d] of [["d1", d1()], ["d2", d2()]] as const) {
          const made = await answered(`a counter on ${name} while a bound slot is watched and a row batch is held`, d.call("increment_counter", { name: `watched-${name}-${i}` }));
          expect(made.value).toBe(1);
        }
        await Bun.sleep(100);
      }
      sleeper.kill(9);
      await sleeper.exited;
      // The next checks find the process gone; the release, a line body, waits for the held batch.
      await Bun.sleep(600);
      expect(await held()).toBe(1);
      await batch.commit();
      await until("the slot released once the held batch ended", async () => (await held()) === 0, 5_000, 50);
      const released = (await d1().call("watch_changes", { since_revision: 0, kinds: ["pool.released"], resource_prefix: "watched-box", limit: 10 })).changes as { reason?: string }[];
      expect(released.map((e) => e.reason)).toEqual(["process exited"]);
    } finally {
      sleeper.kill(9);
      await batch.close();
    }
  });
});

// Every daemon that knew a deadline used to fire it at the same instant, each in the global
// order: N exclusive turns for one lapse, all but the first finding nothing left to do
// (docs/cluster.md, "An expiry on every daemon"). Here a lock group taken on d1 (a line body,
// so d2 learns of it) lapses while a row batch is held open, and d2's transactions are traced
// (AIRLOCK_TRACE: which order each one took): d2 takes no exclusive turn for it.
describePg("a lapse on two daemons", () => {
  test("is fired by the daemon that set it; the other looks in the shared order after a grace, finds it done, and takes no exclusive turn", async () => {
    const db = await freshDatabase();
    const { first: d1, traced, labels } = await tracedDaemons(db.url, 1);
    const d2 = traced[0]!;
    const batch = await rowBatchHolder(db.url);
    const held = async () => (await storeQuery<{ n: string }>(db.url, "SELECT count(*) AS n FROM locks WHERE name = 'lapsing' AND agent_id IS NOT NULL"))[0]!.n;
    try {
      await seenEachOther(db.url);
      expect(await d1.call("lock_resources", { names: ["lapsing"], agent_id: "brief", ttl_seconds: 2 })).toMatchObject({ locked: true });
      expect((await d2.call("list_locks")).map((l: LockEntry) => l.name)).toEqual(["lapsing"]); // d2 caught up: the lapse is armed there too
      const from = Date.now();
      await batch.hold();
      // Past the lapse and d2's grace: d1's expiry waits for the held batch, and so does d2's look.
      await Bun.sleep(2_000 + OTHERS_GRACE_MS + 1_000);
      expect(await held()).toBe("1");
      await batch.commit();
      await until("the lock expired", async () => (await held()) === "0", 5_000, 50);
      await Bun.sleep(500); // d2's look, answered after d1's expiry, finds it done
      const to = Date.now();
      await d2.kill(); // its trace is written at exit
      const orders = labels(d2, from, to).filter((l) => l.startsWith("order "));
      expect(orders).toContain("order shared"); // the look
      expect(orders.filter((l) => l === "order exclusive")).toEqual([]);
      const expired = (await d1.call("watch_changes", { since_revision: 0, kinds: ["lock.expired"], resource_prefix: "lapsing", limit: 10 })).changes;
      expect(expired.length).toBe(1);
    } finally {
      await batch.close();
      await Promise.all([d1.kill(9), d2.kill(9)]);
      await db.drop();
    }
  });
});

// A change-feed long poll used to join the stored lines and leave them, each in a transaction of
// the global order, and its wake-up was a catch-up in that order too: three exclusive turns a
// poll, each stopping every daemon's row bodies. Now its place is the daemon's memory, a change
// recorded anywhere wakes it through a read in the shared order, and it looks for itself.
// d2's trace (AIRLOCK_TRACE) counts its transactions in each order meanwhile.
describePg("change-feed long polls on two daemons", () => {
  test("take no exclusive turn: woken by changes made on the other daemon and on their own, or ended by their wait, with no place stored, though d2 last caught up 1,200 changes ago", async () => {
    const orders = await ordersOfTracedPair(async (d1, d2, db) => {
      const stored = async () => (await storeQuery<{ n: string }>(db, "SELECT count(*) AS n FROM waiters WHERE queue = 'journal'"))[0]!.n;
      // Row bodies on d1 that d2 never catches up with (no call of d2's is in the global order
      // meanwhile): its first check for a watcher starts from the earliest revision a watcher
      // asked after, not from where d2 last caught up (1,000 rows behind or more, it used to
      // leave them to a catch-up in the exclusive order).
      await Promise.all(Array.from({ length: 16 }, async (_, c) => {
        for (let i = 0; i < 75; i++) await d1.call("increment_counter", { name: `earlier-${c}` });
      }));
      let since = (await d2.call("watch_changes", { kinds: ["nothing."] })).revision as number; // the newest, in one look
      expect(since).toBeGreaterThanOrEqual(1_200);
      const from = Date.now();
      const poll = (wait: number) => blocked(d2.call("watch_changes", { since_revision: since, wait_seconds: wait, kinds: ["counter."], resource_prefix: "polled-" }));
      for (const [i, d, name] of [[0, d1, "d1"], [1, d2, "d2"], [2, d1, "d1"]] as const) {
        const watching = poll(LONG_WAIT_S);
        await Bun.sleep(300);
        expect(watching.settled()).toBe(false);
        expect(await stored()).toBe("0");
        await d.call("increment_counter", { name: `unwanted-${i}` });
        const made = await d.call("increment_counter", { name: `polled-${i}` });
        const woke = await answered(`the watcher on d2 after a change on ${name}`, watching.promise);
        expect(woke.changes.map((e: { resource: string; value?: number }) => [e.resource, e.value])).toEqual([[`polled-${i}`, made.value]]);
        since = woke.revision;
      }
      const ended = await answered("a poll that nothing answers, at its wait's end", poll(1).promise, 5_000);
      expect(ended.changes).toEqual([]);
      expect(ended.revision).toBe(since);
      return { from, to: Date.now() };
    });
    expect(orders).toContain("order shared");
    expect(orders.filter((l) => l === "order exclusive")).toEqual([]);
  });
});

// A deadline whose own daemon does not fire it (stopped here; slow, or dead and not seen dead
// yet) was fired by every other daemon that found it due, each in the global order. Now the
// daemon whose turn is first fires it; the others look again when their turn comes, and find
// it done. A row batch held open past the deadline lets both others' looks run side by side
// (each finds it due) and holds the expiry until the batch ends; the others' traces
// (AIRLOCK_TRACE) count their transactions in the global order meanwhile.
describePg("a lapse whose own daemon is stopped, on three daemons", () => {
  test("is fired by one of the others, once, in one exclusive turn; the last looks again at its turn and finds it done", async () => {
    const db = await freshDatabase();
    const { first: d1, traced: others, labels } = await tracedDaemons(db.url, 2);
    const batch = await rowBatchHolder(db.url);
    const held = async () => (await storeQuery<{ n: string }>(db.url, "SELECT count(*) AS n FROM locks WHERE name = 'orphaned' AND agent_id IS NOT NULL"))[0]!.n;
    const exclusiveWaiting = async () => Number((await storeQuery<{ n: string }>(db.url, "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND mode = 'ExclusiveLock'"))[0]!.n);
    const beatOf = async (pid: number) => (await storeQuery<{ seen_at: string }>(db.url, "SELECT seen_at FROM daemons WHERE pid = ?", pid))[0]!.seen_at;
    try {
      await seenEachOther(db.url);
      expect(await d1.call("lock_resources", { names: ["orphaned"], agent_id: "stopped-holder", ttl_seconds: 1 })).toMatchObject({ locked: true });
      const taken = Date.now();
      for (const d of others) expect((await d.call("list_locks")).map((l: LockEntry) => l.name)).toEqual(["orphaned"]); // armed there, from the rows
      // d1 stopped just after a heartbeat (so that it is not counted dead, 5 s, before it resumes): it fires nothing.
      const beat = await beatOf(d1.proc.pid);
      await until("a heartbeat of d1", async () => (await beatOf(d1.proc.pid)) !== beat, 3_000, 10);
      d1.proc.kill("SIGSTOP");
      const from = Date.now();
      await batch.hold();
      // One of the others found it due and asks for the order to fire it (within its look and a step).
      await until("an expiry waiting for the held batch", async () => (await exclusiveWaiting()) > 0, 10_000, 20);
      d1.proc.kill("SIGCONT"); // its own timer fires now, behind the batch too
      await Bun.sleep(300); // the other's look has run too (their timers fire at the same instant)
      await batch.commit();
      await until("the lock expired", async () => (await held()) === "0", 10_000, 50);
      // Past the last turn (three daemons: the deadline, the grace, two steps), the others' looks are done.
      await Bun.sleep(Math.max(0, taken + 1_000 + OTHERS_GRACE_MS + 2 * TURN_STEP_MS + 500 - Date.now()));
      const to = Date.now();
      for (const d of others) await d.kill(); // their traces are written at exit
      const exclusive = others.flatMap((d) => labels(d, from, to).filter((l) => l === "order exclusive"));
      expect(exclusive.length).toBe(1);
      const expired = (await storeQuery<{ n: string }>(db.url, "SELECT count(*) AS n FROM journal WHERE kind = 'lock.expired' AND resource = 'orphaned'"))[0]!.n;
      expect(expired).toBe("1");
    } finally {
      d1.proc.kill("SIGCONT");
      await batch.close();
      await Promise.all([d1, ...others].map((d) => d.kill(9)));
      await db.drop();
    }
  });
});

// A heartbeat moved any agent's expiry, lapsed or not: on a daemon that had not fired the lapse
// (another daemon's to fire, or a moment late) it revived an agent whose presence had ended,
// and the locks it held stayed held. Now a row body beats only a live agent; a lapsed one is
// departed first, by a line body, as its lapse would, and registered anew.
describePg("a heartbeat for an agent that lapsed, on another daemon", () => {
  const c = useCluster(2);
  const d1 = () => c.daemons[0]!;
  const d2 = () => c.daemons[1]!;

  test("departs it first (its locks freed, recorded lapsed) and registers it anew, though its own daemon has not fired the lapse", async () => {
    expect(await d1().call("register_agent", { agent_id: "sleepy", ttl_seconds: 1 })).toMatchObject({ registered: true });
    expect(await d1().call("lock_resource", { name: "sleepy-lock", agent_id: "sleepy", ttl_seconds: 60 })).toMatchObject({ locked: true });
    d1().proc.kill("SIGSTOP"); // d1 cannot fire the lapse it armed (well within the 5 s that would make it dead)
    // Resumed in any case before it counts as dead: stopped inside a transaction (a read of its
    // own, every 5 s), it would hold up the line body on d2 until then.
    const resume = setTimeout(() => d1().proc.kill("SIGCONT"), 4_000);
    try {
      await Bun.sleep(1_300);
      expect(await d2().call("register_agent", { agent_id: "sleepy", ttl_seconds: 60 })).toMatchObject({ registered: true, expires_in_seconds: 60 });
      expect(await d2().call("lock_resource", { name: "sleepy-lock", agent_id: "next", ttl_seconds: 60 })).toMatchObject({ locked: true });
    } finally {
      clearTimeout(resume);
      d1().proc.kill("SIGCONT");
    }
    const kinds = ((await d1().call("watch_changes", { since_revision: 0, resource_prefix: "sleepy", limit: 50 })).changes as { kind: string; reason?: string }[]).map((e) => (e.reason ? `${e.kind} (${e.reason})` : e.kind));
    expect(kinds.filter((k) => k.startsWith("agent."))).toEqual(["agent.registered", "agent.departed (lapsed)", "agent.registered"]);
    expect((await d1().call("list_agents")).map((a: { agent_id: string }) => a.agent_id)).toContain("sleepy");
  });
});
