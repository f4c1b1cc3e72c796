import { describe, expect, test } from "bun:test";
import { settle, useKernel } from "../helpers/kernel.ts";

// Deadlock detection across locks, lock groups, slots and path claims: the call that would close
// a cycle is answered at once with the cycle; the others keep waiting; no cycle, no answer.
const t = useKernel();
const TTL = 600_000;
const WAIT = 30_000;

const lock = (agentId: string, name: string, waitMs = 0, signal?: AbortSignal) =>
  t.kernel.locks.acquire({ name, agentId, ttlMs: TTL, waitMs }, signal);
const group = (agentId: string, names: string[], waitMs = 0) => t.kernel.locks.acquireMany({ names, agentId, ttlMs: TTL, waitMs });
const slot = (agentId: string, waitMs = 0, weight = 1) => t.kernel.pools.acquire({ agentId, pool: "build", weight, waitMs, ttlMs: TTL });
const claim = (agentId: string, paths: string[], waitMs = 0) => t.kernel.paths.claim({ agentId, paths, ttlMs: TTL, waitMs });
const configure = (capacity: number) =>
  t.kernel.pools.configure({ pool: "build", capacity, expectedVersion: 0, author: "test", reason: "test" });

/** The cycle as "a -(resource)-> b" steps, for readable expectations. */
const steps = (d: { cycle: { agent_id: string; waits_for: string; resource: string }[] } | undefined) =>
  d?.cycle.map((s) => `${s.agent_id} -(${s.resource})-> ${s.waits_for}`);

/** A call that is still blocked after everything pending has run (boxed: awaiting it must not await the call). */
async function stillBlocked<T>(p: Promise<T>): Promise<{ call: Promise<T> }> {
  let done = false;
  // Calls still blocked at the end of a test are answered by the kernel's close: not a failure.
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await settle();
  expect(done).toBe(false);
  return { call: p };
}

describe("deadlock: two agents", () => {
  test("lock against lock: the second waiter is answered at once with the cycle, the first keeps waiting", async () => {
    expect((await lock("A", "x")).locked).toBe(true);
    expect((await lock("B", "y")).locked).toBe(true);
    const { call: a } = await stillBlocked(lock("A", "y", WAIT));
    const b = await lock("B", "x", WAIT);
    expect(b.locked).toBe(false);
    expect(!b.locked && steps(b.deadlock)).toEqual(["B -(x)-> A", "A -(y)-> B"]);
    expect(!b.locked && b.wake).toBeUndefined(); // the victim holds no place
    expect(t.kernel.locks.waits.size).toBe(1); // A's place only
    // B gives up y: A, who kept waiting, gets it.
    expect(await t.kernel.locks.release("y", undefined, "B")).toBe(true);
    expect((await a).locked).toBe(true);
    const kinds = (await t.kernel.journal.since(0)).map((e) => e.kind);
    expect(kinds).toContain("deadlock.detected");
  });

  test("lock group against a slot: A holds the slot and waits for a group, B holds a name and waits for the slot", async () => {
    await configure(1);
    expect((await slot("A")).granted).toBe(true);
    expect((await lock("B", "db")).locked).toBe(true);
    await stillBlocked(group("A", ["cache", "db"], WAIT));
    const b = await slot("B", WAIT);
    expect(b.granted).toBe(false);
    expect(!b.granted && steps(b.deadlock)).toEqual(["B -(build)-> A", "A -(db)-> B"]);
    expect(!b.granted && b.wakeToken).toBeUndefined();
    // Its request left the line: nobody is queued for the pool.
    expect((await t.kernel.pools.list())[0]!.queued).toBe(0);
  });

  test("path claim against a lock", async () => {
    expect((await claim("A", ["src/api/**"])).granted).toBe(true);
    expect((await lock("B", "migrations")).locked).toBe(true);
    await stillBlocked(lock("A", "migrations", WAIT));
    const b = await claim("B", ["src/api/users.ts"], WAIT);
    expect(b.granted).toBe(false);
    expect(!b.granted && steps(b.deadlock)).toEqual(["B -(src/api/users.ts)-> A", "A -(migrations)-> B"]);
    expect(!b.granted && b.conflicts[0]?.heldBy).toBe("A");
  });
});

describe("deadlock: three agents, mixed primitives", () => {
  test("lock → path → slot → back: the third call is answered, the two before it keep waiting", async () => {
    await configure(1);
    expect((await lock("A", "npm")).locked).toBe(true);
    expect((await claim("B", ["docs/**"])).granted).toBe(true);
    expect((await slot("C")).granted).toBe(true);
    const { call: a } = await stillBlocked(claim("A", ["docs/readme.md"], WAIT)); // A waits for B
    const { call: b } = await stillBlocked(slot("B", WAIT)); // B waits for C
    const c = await lock("C", "npm", WAIT); // C would wait for A: the cycle closes
    expect(c.locked).toBe(false);
    expect(!c.locked && steps(c.deadlock)).toEqual(["C -(npm)-> A", "A -(docs/readme.md)-> B", "B -(build)-> C"]);
    // The others are untouched: C gives its slot back, B gets it; B frees docs, A gets them.
    const cSlot = (await t.kernel.pools.list())[0]!;
    expect(cSlot.holders.map((h) => h.agentId)).toEqual(["C"]);
    t.store.tx(() => t.kernel.pools.releaseAllOf("C"));
    expect((await b).granted).toBe(true);
    t.store.tx(() => t.kernel.paths.releaseAllOf("B"));
    expect((await a).granted).toBe(true);
  });

  test("the graph shows who waits for whom; no cycle when there is none", async () => {
    expect((await lock("A", "x")).locked).toBe(true);
    expect((await lock("B", "y")).locked).toBe(true);
    expect((await lock("C", "z")).locked).toBe(true);
    await stillBlocked(lock("A", "y", WAIT));
    await stillBlocked(lock("B", "z", WAIT));
    const v = t.store.read(t.kernel.graph.view());
    expect(v.waits.map((w) => `${w.agentId}->${w.edges.map((e) => e.waitsFor).join(",")}`).sort()).toEqual(["A->B", "B->C"]);
    expect(v.deadlocks).toEqual([]);
    expect(v.wouldDeadlock).toEqual([]);
  });
});

/** The graph's cycles of both kinds, as readable steps. */
const kinds = () => {
  const v = t.store.read(t.kernel.graph.view());
  return {
    deadlocks: v.deadlocks.map((d) => steps(d)),
    would: v.wouldDeadlock.map((c) => ({ steps: steps(c), betweenCalls: c.betweenCalls })),
  };
};

/**
 * A holds x, B holds y; A waits for y and times out, then B waits for x and times out: a cycle of
 * places kept between calls. Returns B's answer.
 */
async function crossedBetweenCalls() {
  expect((await lock("A", "x")).locked).toBe(true);
  expect((await lock("B", "y")).locked).toBe(true);
  const a = lock("A", "y", 1000);
  await settle();
  t.clock.advance(1000);
  expect((await a).locked).toBe(false);
  const b = lock("B", "x", 1000);
  await settle();
  t.clock.advance(1000);
  return b;
}

describe("the graph's two kinds of cycle: a deadlock (everyone blocked now) and one that would deadlock", () => {
  test("all between calls: nobody was answered, and the cycle would deadlock if both block again", async () => {
    expect((await crossedBetweenCalls()).locked).toBe(false);
    expect(kinds()).toEqual({ deadlocks: [], would: [{ steps: ["A -(y)-> B", "B -(x)-> A"], betweenCalls: ["A", "B"] }] });
  });

  test("one blocked and one between calls: accepted by the daemon, so no deadlock; it would be if the one away blocks", async () => {
    expect((await lock("A", "x")).locked).toBe(true);
    expect((await lock("B", "y")).locked).toBe(true);
    const a = lock("A", "y", 1000);
    await settle();
    t.clock.advance(1000);
    expect((await a).locked).toBe(false); // A keeps its place, between calls
    await stillBlocked(lock("B", "x", WAIT)); // accepted: A may let go
    // The cycle starts with the agent it waits on to block.
    expect(kinds()).toEqual({ deadlocks: [], would: [{ steps: ["A -(y)-> B", "B -(x)-> A"], betweenCalls: ["A"] }] });
    // And so it is: A's next blocking call is answered with that very cycle.
    const again = await lock("A", "y", WAIT);
    expect(!again.locked && steps(again.deadlock)).toEqual(["A -(y)-> B", "B -(x)-> A"]);
  });

  test("a deadlock that forms without a closing call (a hand-off) is one: every agent in it is blocked now", async () => {
    expect((await lock("A", "x")).locked).toBe(true);
    expect((await lock("C", "z")).locked).toBe(true);
    const b1 = lock("B", "x", WAIT); // B's first call waits for A
    await stillBlocked(b1);
    await stillBlocked(lock("B", "z", WAIT)); // its second waits for C, who waits for nobody
    await stillBlocked(lock("C", "x", WAIT)); // C waits for A: no cycle yet
    expect(kinds()).toEqual({ deadlocks: [], would: [] });
    // A lets go: x passes to B, so C now waits for B, who (in its other call) waits for C.
    expect(await t.kernel.locks.release("x", undefined, "A")).toBe(true);
    expect((await b1).locked).toBe(true);
    const k = kinds();
    expect(k.would).toEqual([]);
    expect(k.deadlocks).toHaveLength(1);
    expect([...k.deadlocks[0]!].sort()).toEqual(["B -(z)-> C", "C -(x)-> B"]);
  });

  test("a cycle of blocked calls through an agent whose other call can progress is no deadlock: it may let go", async () => {
    expect((await lock("A", "a")).locked).toBe(true);
    expect((await lock("B", "b")).locked).toBe(true);
    expect((await lock("C", "c")).locked).toBe(true);
    await stillBlocked(lock("A", "b", WAIT));
    await stillBlocked(lock("A", "c", WAIT)); // C waits for nobody: this call of A's can end
    await stillBlocked(lock("B", "a", WAIT)); // accepted, for the same reason
    expect(kinds().deadlocks).toEqual([]);
  });
});

test("the graph shows a cycle between places kept between calls (nobody blocked, so nobody was answered)", async () => {
  const r = await crossedBetweenCalls(); // A is between calls when B asks: no answer yet
  expect(!r.locked && r.deadlock).toBeUndefined();
  expect(t.store.read(t.kernel.graph.view()).wouldDeadlock.map((c) => steps(c))).toEqual([["A -(y)-> B", "B -(x)-> A"]]);
});

describe("deadlock: no false positives", () => {
  test("a chain that ends in an agent who is not waiting is no deadlock", async () => {
    expect((await lock("A", "x")).locked).toBe(true);
    expect((await lock("B", "y")).locked).toBe(true);
    await stillBlocked(lock("A", "y", WAIT));
    const c = lock("C", "x", WAIT); // C → A → B, and B waits for nobody
    await stillBlocked(c);
  });

  test("a waiter between calls (its call timed out) does not count: its agent may let go", async () => {
    expect((await lock("A", "x")).locked).toBe(true);
    expect((await lock("B", "y")).locked).toBe(true);
    const a = lock("A", "y", 1000);
    await settle();
    t.clock.advance(1000);
    expect((await a).locked).toBe(false); // A keeps its place, detached
    await stillBlocked(lock("B", "x", WAIT));
    // A's next blocking call closes the cycle, and is answered at once.
    const again = await lock("A", "y", WAIT);
    expect(!again.locked && steps(again.deadlock)).toEqual(["A -(y)-> B", "B -(x)-> A"]);
  });

  test("a slot wait with a holder who is not stuck is no deadlock (one release may be enough)", async () => {
    await configure(2);
    expect((await slot("A")).granted).toBe(true);
    expect((await slot("D")).granted).toBe(true); // D holds the other unit and waits for nothing
    expect((await lock("B", "db")).locked).toBe(true);
    await stillBlocked(lock("A", "db", WAIT));
    await stillBlocked(slot("B", WAIT)); // B waits for A or D: D can free it
  });

  test("a slot wait whose every holder is stuck on the caller is a deadlock", async () => {
    await configure(2);
    expect((await slot("A")).granted).toBe(true);
    expect((await slot("D")).granted).toBe(true);
    expect((await lock("B", "db")).locked).toBe(true);
    await stillBlocked(lock("A", "db", WAIT));
    await stillBlocked(lock("D", "db", WAIT));
    const b = await slot("B", WAIT);
    expect(!b.granted && b.deadlock?.cycle[0]?.agent_id).toBe("B");
  });

  test("waiting behind your own lock is not a cycle (the lease ends it)", async () => {
    expect((await lock("A", "x")).locked).toBe(true);
    await stillBlocked(lock("A", "x", WAIT));
  });

  test("a call without wait_seconds is never a deadlock answer", async () => {
    expect((await lock("A", "x")).locked).toBe(true);
    expect((await lock("B", "y")).locked).toBe(true);
    await stillBlocked(lock("A", "y", WAIT));
    const b = await lock("B", "x");
    expect(!b.locked && b.deadlock).toBeUndefined();
  });
});
