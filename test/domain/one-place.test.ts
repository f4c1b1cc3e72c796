// The two waiter defects behind the soak's "4 waiters for 3 callers", fixed in the mechanism:
// (a) a client that dropped before its first answer never learned its wake_token, and its next
//     call took a second place; now a waiter is found by (agent_id, resource) too;
// (b) a grant made to a blocked call whose client was already gone sat with an agent that never
//     learned it held the lock; now it passes to the next waiter.
// Plus the all-or-nothing group waits of lock_resources, built on the same lines.
import { describe, expect, test } from "bun:test";
import type { AcquireRequest, GroupRequest } from "../../src/domain/locks.ts";
import { useKernel } from "../helpers/kernel.ts";
import { flush, track } from "./support.ts";

const TTL = 60_000;
const t = useKernel();

function acquire(name: string, agentId: string, more: Partial<AcquireRequest> = {}, signal?: AbortSignal) {
  return t.kernel.locks.acquire({ name, agentId, ttlMs: TTL, waitMs: 0, ...more }, signal);
}
function group(names: string[], agentId: string, more: Partial<GroupRequest> = {}, signal?: AbortSignal) {
  return t.kernel.locks.acquireMany({ names, agentId, ttlMs: TTL, ...more }, signal);
}
async function take(name: string, agentId: string) {
  const r = await acquire(name, agentId);
  if (!r.locked) throw new Error(`${agentId} did not get ${name}`);
  return r;
}
const holderOf = async (name: string) => (await t.kernel.locks.list()).find((l) => l.name === name)?.agent_id;
const lineOf = (name: string) => t.kernel.locks.waits.line(name).map((w) => `${w.agentId}${w.attached ? "" : "(detached)"}`);

describe("one place per agent per line", () => {
  test("an agent whose client dropped before its first answer resumes its own place when it calls again without a token", async () => {
    const h = await take("db", "H");
    const gone = new AbortController();
    const first = track(acquire("db", "A", { waitMs: 10_000 }, gone.signal));
    await flush();
    const b = track(acquire("db", "B", { waitMs: 10_000 }));
    await flush();
    gone.abort(); // A's client dropped: A never saw its wake_token
    await flush();
    expect(first.value).toMatchObject({ locked: false });
    expect(lineOf("db")).toEqual(["A(detached)", "B"]);
    const again = track(acquire("db", "A", { waitMs: 10_000 }));
    await flush();
    expect(lineOf("db")).toEqual(["A", "B"]);
    await t.kernel.locks.release("db", h.token, undefined);
    await flush();
    expect(again.value).toMatchObject({ locked: true });
    expect(await holderOf("db")).toBe("A");
    expect(b.done).toBe(false);
  });

  test("a timed-out agent that lost its wake_token gets the same token and place back", async () => {
    await take("db", "H");
    const a = acquire("db", "A", { waitMs: 1_000 });
    const b = acquire("db", "B", { waitMs: 1_000 });
    t.clock.advance(1_000);
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.locked || rb.locked).toBe(false);
    const tokenA = !ra.locked ? ra.wake!.token : "";
    const poll = await acquire("db", "A");
    expect(poll).toMatchObject({ locked: false, wake: { token: tokenA, position: 1 } });
    expect(t.kernel.locks.waits.size).toBe(2);
  });

  test("a wake_token for another resource does not make a second place: the agent's own place is found", async () => {
    await take("db", "H");
    await take("other", "H");
    const onDb = acquire("db", "A", { waitMs: 1 });
    t.clock.advance(1);
    const r1 = await onDb;
    const onOther = acquire("other", "A", { waitMs: 1 });
    t.clock.advance(1);
    const r2 = await onOther;
    if (r1.locked || r2.locked) throw new Error("unexpected grant");
    const again = await acquire("db", "A", { wakeToken: r2.wake!.token });
    expect(again).toMatchObject({ locked: false, wake: { token: r1.wake!.token, position: 1 } });
  });
});

describe("a grant to a call whose client is gone", () => {
  test("passes the lock to the next waiter, and the gone agent keeps its place, detached", async () => {
    const h = await take("db", "H");
    const goneA = new AbortController();
    const a = track(acquire("db", "A", { waitMs: 10_000 }, goneA.signal));
    const b = track(acquire("db", "B", { waitMs: 10_000 }));
    await flush();
    // The release hands the lock to A inside its transaction; A's client goes away before the
    // answer can be written (here: before the transaction commits).
    t.store.tx(function* () {
      t.kernel.locks.release("db", h.token, undefined);
      goneA.abort();
    });
    await flush();
    expect(a.value).toMatchObject({ locked: false });
    expect(b.value).toMatchObject({ locked: true });
    expect(await holderOf("db")).toBe("B");
    expect(lineOf("db")).toEqual(["A(detached)"]);
    // A comes back: it finds its place and gets the lock when B is done.
    const again = track(acquire("db", "A", { waitMs: 10_000 }));
    await flush();
    await t.kernel.locks.release("db", (b.value as { token: string }).token, undefined);
    await flush();
    expect(again.value).toMatchObject({ locked: true });
  });

  test("with nobody else waiting the lock is simply free again", async () => {
    const h = await take("db", "H");
    const gone = new AbortController();
    const a = track(acquire("db", "A", { waitMs: 10_000 }, gone.signal));
    await flush();
    t.store.tx(function* () {
      t.kernel.locks.release("db", h.token, undefined);
      gone.abort();
    });
    await flush();
    expect(a.value).toMatchObject({ locked: false });
    expect(await holderOf("db")).toBeUndefined();
    expect(await acquire("db", "C")).toMatchObject({ locked: true });
  });

  test("a task claimed for a gone claimer goes back to the queue and to the next claimer, its attempt uncounted", async () => {
    const gone = new AbortController();
    const a = track(t.kernel.tasks.claim("q", "A", 30_000, 10_000, gone.signal));
    const b = track(t.kernel.tasks.claim("q", "B", 30_000, 10_000));
    await flush();
    t.store.tx(function* () {
      t.kernel.tasks.push({ queue: "q", payload: "job", priority: 0 });
      gone.abort();
    });
    await flush();
    expect(a.value).toEqual({ claimed: false });
    expect(b.value).toMatchObject({ claimed: true, attempts: 1 });
    expect((await t.kernel.tasks.list("q")).map((x) => [x.state, x.lease_agent, x.attempts])).toEqual([["claimed", "B", 1]]);
  });
});

describe("lock_resources with a wait: all or nothing", () => {
  test("blocks until every name is free and takes them together", async () => {
    const x = await take("a", "X");
    const y = await take("b", "Y");
    const g = track(group(["a", "b"], "G", { waitMs: 10_000 }));
    await flush();
    await t.kernel.locks.release("a", x.token, undefined);
    await flush();
    expect(g.done).toBe(false);
    expect(await holderOf("a")).toBeUndefined(); // reserved, not held: never a partial hold
    await t.kernel.locks.release("b", y.token, undefined);
    await flush();
    expect(g.value).toMatchObject({ locked: true });
    expect([await holderOf("a"), await holderOf("b")]).toEqual(["G", "G"]);
  });

  test("a newcomer does not barge past a blocked group on a free member", async () => {
    await take("b", "Y");
    const g = track(group(["a", "b"], "G", { waitMs: 10_000 }));
    await flush();
    expect(await acquire("a", "N")).toMatchObject({ locked: false, heldBy: "G" });
    expect(await group(["a"], "N2")).toMatchObject({ locked: false, heldBy: "G" });
    expect(g.done).toBe(false);
  });

  test("a waiter ahead of the group on a member is served first; the group waits for it", async () => {
    const x = await take("a", "X");
    const s = track(acquire("a", "S", { waitMs: 10_000 }));
    const g = track(group(["a", "b"], "G", { waitMs: 10_000 }));
    await flush();
    await t.kernel.locks.release("a", x.token, undefined);
    await flush();
    expect(s.value).toMatchObject({ locked: true });
    expect(g.done).toBe(false);
    await t.kernel.locks.release("a", (s.value as { token: string }).token, undefined);
    await flush();
    expect(g.value).toMatchObject({ locked: true });
  });

  test("a group that stops waiting gives its reserved names to the next in line", async () => {
    await take("b", "Y");
    const g = track(group(["a", "b"], "G", { waitMs: 1_000 }));
    await flush();
    const s = track(acquire("a", "S", { waitMs: 10_000 }));
    await flush();
    expect(s.done).toBe(false);
    t.clock.advance(1_000);
    await flush();
    expect(g.value).toMatchObject({ locked: false, heldBy: "S" }); // "a", first in byte order, went to S
    expect(s.value).toMatchObject({ locked: true });
  });

  test("groups over overlapping sets never deadlock: each line serves them in arrival order", async () => {
    const holds = await Promise.all(["a", "b", "c"].map((n) => take(n, "H")));
    const g1 = track(group(["a", "b"], "G1", { waitMs: 10_000 }));
    const g2 = track(group(["b", "c"], "G2", { waitMs: 10_000 }));
    const g3 = track(group(["c", "a"], "G3", { waitMs: 10_000 }));
    await flush();
    // Free them in the order that would deadlock greedy per-name reservations.
    for (const [i, n] of ["c", "b", "a"].entries()) await t.kernel.locks.release(n, holds[2 - i]!.token, undefined);
    await flush();
    expect(g1.value).toMatchObject({ locked: true });
    expect(g2.done).toBe(false);
    const r1 = g1.value as { tokens: Record<string, string> };
    await t.kernel.locks.release("a", r1.tokens.a!, undefined);
    await t.kernel.locks.release("b", r1.tokens.b!, undefined);
    await flush();
    expect(g2.value).toMatchObject({ locked: true });
    const r2 = g2.value as { tokens: Record<string, string> };
    await t.kernel.locks.release("b", r2.tokens.b!, undefined);
    await t.kernel.locks.release("c", r2.tokens.c!, undefined);
    await flush();
    expect(g3.value).toMatchObject({ locked: true });
  });

  test("a timed-out group keeps its place under its wake_token and resumes it", async () => {
    const y = await take("b", "Y");
    const first = group(["b", "a"], "G", { waitMs: 1_000 });
    t.clock.advance(1_000);
    const r = await first;
    expect(r).toMatchObject({ locked: false, heldBy: "Y" });
    const later = track(group(["a", "b"], "L", { waitMs: 10_000 }));
    const again = track(group(["a", "b"], "G", { waitMs: 10_000, wakeToken: r.wake!.token }));
    await flush();
    await t.kernel.locks.release("b", y.token, undefined);
    await flush();
    expect(again.value).toMatchObject({ locked: true });
    expect(later.done).toBe(false);
  });
});
