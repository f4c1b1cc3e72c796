import { describe, expect, test } from "bun:test";
import type { AcquireRequest, Grant } from "../../src/domain/locks.ts";
import { makeKernel, useKernel } from "../helpers/kernel.ts";
import { flush, LateClock, track } from "./support.ts";

const HEARTBEAT = 60_000;
const TTL = 15 * 60_000;

const t = useKernel();

function acquire(name: string, agentId: string, more: Partial<AcquireRequest> = {}) {
  return t.kernel.locks.acquire({ name, agentId, ttlMs: TTL, waitMs: 0, ...more });
}

const holderOf = async (name: string) => (await t.kernel.locks.list()).find((l) => l.name === name)?.agent_id;
const taskState = async (queue: string, id: number) => (await t.kernel.tasks.list(queue)).find((x) => x.id === id);

describe("Presence", () => {
  test("register returns the heartbeat's expiry and lists the agent until then", async () => {
    const now = t.clock.now();
    expect(await t.kernel.presence.register("A", HEARTBEAT)).toBe(now + HEARTBEAT);
    expect((await t.kernel.presence.list()).map((a) => [a.agent_id, a.expires_at])).toEqual([["A", now + HEARTBEAT]]);
    t.clock.advance(HEARTBEAT - 1);
    expect((await t.kernel.presence.list()).map((a) => a.agent_id)).toEqual(["A"]);
    t.clock.advance(1);
    expect(await t.kernel.presence.list()).toEqual([]);
  });

  test("lists agents by id", async () => {
    await t.kernel.presence.register("zed", HEARTBEAT);
    await t.kernel.presence.register("amy", HEARTBEAT);
    await t.kernel.presence.register("max", HEARTBEAT);
    expect((await t.kernel.presence.list()).map((a) => a.agent_id)).toEqual(["amy", "max", "zed"]);
  });

  test("refuses a heartbeat ttl of zero or less", async () => {
    await expect(t.kernel.presence.register("A", 0)).rejects.toThrow("store: ttlSeconds must be > 0");
    expect(await t.kernel.presence.list()).toEqual([]);
  });

  test("a lapsed heartbeat releases the agent's locks at that moment and hands them to the next blocked waiter", async () => {
    const expiry = await t.kernel.presence.register("A", HEARTBEAT);
    await acquire("db", "A");
    await acquire("cache", "A");
    t.clock.advance(expiry - t.clock.now() - 10_000);
    const b = track(acquire("db", "B", { waitMs: 50_000, ttlMs: 30_000 }));
    t.clock.advance(9_000);
    const c = track(acquire("db", "C", { waitMs: 50_000 }));

    t.clock.advance(999);
    await flush();
    expect(await holderOf("db")).toBe("A");
    expect(b.done).toBe(false);

    t.clock.advance(1);
    expect(t.clock.now()).toBe(expiry);
    expect(await holderOf("db")).toBe("B");
    expect(await holderOf("cache")).toBeUndefined();
    await flush();
    expect(b.value).toMatchObject({ locked: true, expiresAt: expiry + 30_000 });
    expect(c.done).toBe(false);
    t.kernel.locks.waits.clear();
    await c.promise;
  });

  test("a lapsed heartbeat requeues the tasks the agent claimed, at that moment", async () => {
    const expiry = await t.kernel.presence.register("A", HEARTBEAT);
    const id = await t.kernel.tasks.push({ queue: "q", payload: "p", priority: 0 });
    const claim = await t.kernel.tasks.claim("q", "A", 10 * HEARTBEAT, 0);
    expect(claim.claimed).toBe(true);
    t.clock.advance(expiry - t.clock.now() - 1);
    expect((await taskState("q", id))?.state).toBe("claimed");
    t.clock.advance(1);
    expect(await taskState("q", id)).toMatchObject({ state: "pending", lease_agent: null, lease_token: null });
    const again = await t.kernel.tasks.claim("q", "B", 10_000, 0);
    expect(again).toMatchObject({ claimed: true, id });
  });

  test("a lapsed heartbeat hands a requeued task to a claimer blocked on the queue", async () => {
    const expiry = await t.kernel.presence.register("A", HEARTBEAT);
    const id = await t.kernel.tasks.push({ queue: "q", payload: "p", priority: 0 });
    await t.kernel.tasks.claim("q", "A", 10 * HEARTBEAT, 0);
    const b = track(t.kernel.tasks.claim("q", "B", 10_000, 50_000));
    t.clock.advance(expiry - t.clock.now());
    await flush();
    expect(b.value).toMatchObject({ claimed: true, id });
  });

  test("a lapsed heartbeat removes the agent's detached places in lock lines", async () => {
    await t.kernel.presence.register("B", HEARTBEAT);
    await acquire("db", "A", { ttlMs: 10 * HEARTBEAT });
    const b = acquire("db", "B", { waitMs: 1_000 });
    t.clock.advance(1_000);
    const timedOut = await b;
    expect(timedOut).toMatchObject({ locked: false, wake: { position: 1 } });
    expect(t.kernel.locks.waits.line("db").map((w) => w.req.agentId)).toEqual(["B"]);
    t.clock.advance(HEARTBEAT);
    expect(t.kernel.locks.waits.line("db")).toEqual([]);
  });

  test("a heartbeat renewal postpones the departure", async () => {
    await t.kernel.presence.register("A", HEARTBEAT);
    await acquire("db", "A");
    t.clock.advance(HEARTBEAT - 1_000);
    const renewed = await t.kernel.presence.register("A", HEARTBEAT);
    expect(renewed).toBe(t.clock.now() + HEARTBEAT);
    t.clock.advance(HEARTBEAT - 1);
    expect(await holderOf("db")).toBe("A");
    expect((await t.kernel.presence.list()).map((a) => a.agent_id)).toEqual(["A"]);
    t.clock.advance(1);
    expect(await holderOf("db")).toBeUndefined();
  });

  test("unregister releases locks, hands them on and requeues claims at once", async () => {
    await t.kernel.presence.register("A", HEARTBEAT);
    await acquire("db", "A");
    const id = await t.kernel.tasks.push({ queue: "q", payload: "p", priority: 0 });
    await t.kernel.tasks.claim("q", "A", TTL, 0);
    const b = track(acquire("db", "B", { waitMs: 50_000 }));
    await t.kernel.presence.unregister("A");
    expect(await holderOf("db")).toBe("B");
    expect((await taskState("q", id))?.state).toBe("pending");
    expect(await t.kernel.presence.list()).toEqual([]);
    await flush();
    expect(b.value?.locked).toBe(true);
  });

  test("an agent that never registered keeps its lock until the lock's ttl", async () => {
    const g = (await acquire("db", "A", { ttlMs: 10 * HEARTBEAT })) as Grant;
    t.clock.advance(10 * HEARTBEAT - 1);
    expect(await holderOf("db")).toBe("A");
    t.clock.advance(1);
    expect(await holderOf("db")).toBeUndefined();
    expect(g.expiresAt).toBe(t.clock.now());
  });

  test("a departure leaves other agents' locks and claims alone", async () => {
    await t.kernel.presence.register("A", HEARTBEAT);
    await t.kernel.presence.register("B", 10 * HEARTBEAT);
    await acquire("a-lock", "A");
    await acquire("b-lock", "B");
    const id = await t.kernel.tasks.push({ queue: "q", payload: "p", priority: 0 });
    await t.kernel.tasks.claim("q", "B", TTL, 0);
    t.clock.advance(HEARTBEAT);
    expect((await t.kernel.locks.list()).map((l) => [l.name, l.agent_id])).toEqual([["b-lock", "B"]]);
    expect(await taskState("q", id)).toMatchObject({ state: "claimed", lease_agent: "B" });
  });

  test("reports what each agent holds: its live locks and its claimed tasks", async () => {
    await t.kernel.presence.register("A", HEARTBEAT);
    await acquire("z-lock", "A");
    await acquire("a-lock", "A");
    await acquire("brief", "A", { ttlMs: 1_000 });
    await acquire("other", "B");
    const first = await t.kernel.tasks.push({ queue: "q", payload: "1", priority: 0 });
    const second = await t.kernel.tasks.push({ queue: "r", payload: "2", priority: 0 });
    await t.kernel.tasks.claim("q", "A", TTL, 0);
    await t.kernel.tasks.claim("r", "A", TTL, 0);
    t.clock.advance(1_000);
    expect(await t.kernel.locks.heldBy("A")).toEqual(["a-lock", "z-lock"]);
    expect(await t.kernel.tasks.claimedBy("A")).toEqual([first, second]);
    expect(await t.kernel.tasks.claimedBy("B")).toEqual([]);
  });

  test("a heartbeat that arrives after the lapse, before a late timer ran, does not undo the departure", async () => {
    const late = await makeKernel({ clock: new LateClock() });
    try {
      await late.kernel.presence.register("A", HEARTBEAT);
      await late.kernel.locks.acquire({ name: "db", agentId: "A", ttlMs: TTL, waitMs: 0 });
      late.clock.advance(HEARTBEAT);
      await late.kernel.presence.register("A", HEARTBEAT);
      expect(await late.kernel.locks.list()).toEqual([]);
      expect((await late.kernel.presence.list()).map((a) => a.agent_id)).toEqual(["A"]);
    } finally {
      late.kernel.close();
      late.store.close();
    }
  });
});
