import { describe, expect, test } from "bun:test";
import { type ClaimResult, TASK_RETENTION_MS } from "../../src/domain/tasks.ts";
import { makeKernel, useKernel } from "../helpers/kernel.ts";
import { flush, LateClock, track } from "./support.ts";

const LEASE = 120_000;

const t = useKernel();

type Claimed = Extract<ClaimResult, { claimed: true }>;

const push = (payload: string, priority = 0, more: { queue?: string; maxAttempts?: number; author?: string } = {}) =>
  t.kernel.tasks.push({ queue: more.queue ?? "q", payload, priority, maxAttempts: more.maxAttempts, author: more.author });

async function claim(agentId = "A", leaseMs = LEASE, queue = "q"): Promise<Claimed> {
  const r = await t.kernel.tasks.claim(queue, agentId, leaseMs, 0);
  if (!r.claimed) throw new Error(`expected ${agentId} to claim a task from ${queue}`);
  return r;
}

const row = async (id: number, queue = "q") => (await t.kernel.tasks.list(queue)).find((x) => x.id === id);

describe("push and claim", () => {
  test("hands out the highest priority first, then the oldest", async () => {
    await push("low-old", 0);
    await push("high-old", 5);
    await push("high-new", 5);
    await push("negative", -1);
    await push("low-new", 0);
    const order: string[] = [];
    for (let i = 0; i < 5; i++) order.push((await claim()).payload);
    expect(order).toEqual(["high-old", "high-new", "low-old", "low-new", "negative"]);
    expect((await t.kernel.tasks.claim("q", "A", LEASE, 0)).claimed).toBe(false);
  });

  test("push returns increasing ids and list shows the tasks by id", async () => {
    const a = await push("a", 0, { author: "me" });
    const b = await push("b", 3);
    expect(b).toBeGreaterThan(a);
    expect((await t.kernel.tasks.list("q")).map((x) => [x.id, x.payload, x.priority, x.state, x.author])).toEqual([
      [a, "a", 0, "pending", "me"],
      [b, "b", 3, "pending", null],
    ]);
    expect(await t.kernel.tasks.list("other")).toEqual([]);
  });

  test("a claim carries a lease token and marks the task claimed by the agent until the lease ends", async () => {
    const id = await push("work");
    const now = t.clock.now();
    const c = await claim("A", 30_000);
    expect(c).toMatchObject({ claimed: true, id, payload: "work", leaseExpiresAt: now + 30_000, attempts: 1 });
    expect(c.leaseToken).toMatch(/^[0-9a-f]{32}$/);
    expect(await row(id)).toMatchObject({ state: "claimed", lease_agent: "A", lease_token: c.leaseToken, lease_expires_at: now + 30_000 });
  });

  test("queues are independent", async () => {
    await push("in-a", 0, { queue: "a" });
    expect((await t.kernel.tasks.claim("b", "A", LEASE, 0)).claimed).toBe(false);
    expect((await claim("A", LEASE, "a")).payload).toBe("in-a");
  });

  test("refuses a lease of zero or less", async () => {
    await push("x");
    await expect(t.kernel.tasks.claim("q", "A", 0, 0)).rejects.toThrow("store: ttlSeconds must be > 0");
    expect((await t.kernel.tasks.list("q"))[0]!.state).toBe("pending");
  });
});

describe("complete and fail", () => {
  test("complete with the lease token finishes the task once", async () => {
    const id = await push("x");
    const c = await claim();
    expect(await t.kernel.tasks.complete(id, c.leaseToken)).toBe(true);
    expect(await row(id)).toMatchObject({ state: "done", finished_at: t.clock.now() });
    expect(await t.kernel.tasks.complete(id, c.leaseToken)).toBe(false);
    expect(await t.kernel.tasks.fail(id, c.leaseToken, true)).toBe(false);
    expect((await row(id))!.state).toBe("done");
  });

  test("complete and fail with a wrong token change nothing", async () => {
    const id = await push("x");
    const c = await claim();
    expect(await t.kernel.tasks.complete(id, "0".repeat(32))).toBe(false);
    expect(await t.kernel.tasks.fail(id, "0".repeat(32), false)).toBe(false);
    const other = await push("y");
    expect(await t.kernel.tasks.complete(other, c.leaseToken)).toBe(false);
    expect(await row(id)).toMatchObject({ state: "claimed", lease_token: c.leaseToken });
    expect((await row(other))!.state).toBe("pending");
  });

  test("fail with requeue puts the task back to pending for the next claimer", async () => {
    const id = await push("x");
    const first = await claim("A");
    expect(await t.kernel.tasks.fail(id, first.leaseToken, true)).toBe(true);
    expect(await row(id)).toMatchObject({ state: "pending", lease_agent: null, lease_token: null, lease_expires_at: null });
    const second = await claim("B");
    expect(second).toMatchObject({ id, attempts: 2 });
    expect(second.leaseToken).not.toBe(first.leaseToken);
    expect(await t.kernel.tasks.complete(id, first.leaseToken)).toBe(false);
  });

  test("fail without requeue leaves the task in state failed, not done", async () => {
    const id = await push("x");
    const c = await claim();
    expect(await t.kernel.tasks.fail(id, c.leaseToken, false)).toBe(true);
    expect(await row(id)).toMatchObject({ state: "failed", finished_at: t.clock.now() });
    expect((await t.kernel.tasks.claim("q", "B", LEASE, 0)).claimed).toBe(false);
  });
});

describe("leases", () => {
  test("a lapsed lease requeues the task at the lease's exact end", async () => {
    const id = await push("x");
    const c = await claim("A", 30_000);
    t.clock.advance(29_999);
    expect((await row(id))!.state).toBe("claimed");
    t.clock.advance(1);
    expect(t.clock.now()).toBe(c.leaseExpiresAt);
    expect(await row(id)).toMatchObject({ state: "pending", lease_token: null });
    expect(await t.kernel.tasks.complete(id, c.leaseToken)).toBe(false);
  });

  test("a claimant that never registered keeps its claim until the lease ends", async () => {
    const id = await push("x");
    const lease = 30 * 60_000;
    await claim("loner", lease);
    // Far beyond any heartbeat the agent would have needed, had it registered.
    t.clock.advance(lease - 1);
    expect(await t.kernel.presence.list()).toEqual([]);
    expect(await row(id)).toMatchObject({ state: "claimed", lease_agent: "loner" });
    t.clock.advance(1);
    expect((await row(id))!.state).toBe("pending");
  });

  test("a registered claimant whose heartbeat lapses loses its claims at that moment", async () => {
    const heartbeatEnd = await t.kernel.presence.register("A", 10_000);
    const id = await push("x");
    await claim("A", 30 * 60_000);
    t.clock.advance(heartbeatEnd - t.clock.now() - 1);
    expect((await row(id))!.state).toBe("claimed");
    t.clock.advance(1);
    expect((await row(id))!.state).toBe("pending");
  });

  test("a registered claimant that unregisters loses its claims at once", async () => {
    await t.kernel.presence.register("A", 60_000);
    const id = await push("x");
    await claim("A");
    await t.kernel.presence.unregister("A");
    expect((await row(id))!.state).toBe("pending");
  });

  test("a completion that arrives after the lease ended fails, even when the timer is late", async () => {
    const late = await makeKernel({ clock: new LateClock() });
    try {
      const id = await late.kernel.tasks.push({ queue: "q", payload: "x", priority: 0 });
      const c = (await late.kernel.tasks.claim("q", "A", 30_000, 0)) as Claimed;
      late.clock.advance(30_000);
      expect(await late.kernel.tasks.complete(id, c.leaseToken)).toBe(false);
      expect((await late.kernel.tasks.list("q"))[0]!.state).toBe("pending");
    } finally {
      late.kernel.close();
      late.store.close();
    }
  });

  test("renew extends the lease to now + lease", async () => {
    const id = await push("x");
    const c = await claim("A", 30_000);
    t.clock.advance(20_000);
    const r = await t.kernel.tasks.renew(id, c.leaseToken, 30_000);
    expect(r).toEqual({ renewed: true, expiresAt: t.clock.now() + 30_000 });
    t.clock.advance(29_999);
    expect(await row(id)).toMatchObject({ state: "claimed", lease_expires_at: t.clock.now() + 1 });
    t.clock.advance(1);
    expect((await row(id))!.state).toBe("pending");
  });

  test("renew refuses a wrong token and a task that is not claimed", async () => {
    const id = await push("x");
    expect((await t.kernel.tasks.renew(id, "tok", 30_000)).renewed).toBe(false);
    const c = await claim("A", 30_000);
    const wrong = await t.kernel.tasks.renew(id, "0".repeat(32), 30_000);
    expect(wrong.renewed).toBe(false);
    t.clock.advance(30_000);
    expect((await t.kernel.tasks.renew(id, c.leaseToken, 30_000)).renewed).toBe(false);
    expect((await row(id))!.state).toBe("pending");
  });

  test("max_attempts sends a task that keeps lapsing to failed", async () => {
    const id = await push("poison", 0, { maxAttempts: 2 });
    await claim("A", 1_000);
    t.clock.advance(1_000);
    expect(await row(id)).toMatchObject({ state: "pending", attempts: 1 });
    await claim("B", 1_000);
    t.clock.advance(1_000);
    expect(await row(id)).toMatchObject({ state: "failed", attempts: 2 });
    expect((await t.kernel.tasks.claim("q", "C", 1_000, 0)).claimed).toBe(false);
  });

  test("max_attempts also stops a task that keeps failing with requeue", async () => {
    const id = await push("poison", 0, { maxAttempts: 1 });
    const c = await claim();
    expect(await t.kernel.tasks.fail(id, c.leaseToken, true)).toBe(true);
    expect((await row(id))!.state).toBe("failed");
  });

  test("without max_attempts a task is requeued however often it lapses", async () => {
    const id = await push("x");
    for (let i = 0; i < 5; i++) {
      await claim("A", 1_000);
      t.clock.advance(1_000);
    }
    expect(await row(id)).toMatchObject({ state: "pending", attempts: 5 });
  });
});

describe("blocking claims", () => {
  test("a blocked claimer gets a pushed task at once, earliest claimer first", async () => {
    const b = track(t.kernel.tasks.claim("q", "B", LEASE, 30_000));
    const c = track(t.kernel.tasks.claim("q", "C", LEASE, 30_000));
    await flush();
    expect(b.done || c.done).toBe(false);
    const first = await push("one");
    await flush();
    expect(b.value).toMatchObject({ claimed: true, id: first, payload: "one" });
    expect(c.done).toBe(false);
    expect(await row(first)).toMatchObject({ state: "claimed", lease_agent: "B" });
    const second = await push("two");
    await flush();
    expect(c.value).toMatchObject({ claimed: true, id: second });
  });

  test("a blocked claimer gets a task requeued by a lapsed lease", async () => {
    const id = await push("x");
    await claim("A", 5_000);
    const b = track(t.kernel.tasks.claim("q", "B", LEASE, 30_000));
    t.clock.advance(4_999);
    await flush();
    expect(b.done).toBe(false);
    t.clock.advance(1);
    await flush();
    expect(b.value).toMatchObject({ claimed: true, id, attempts: 2 });
  });

  test("a blocked claimer that times out answers claimed:false at its deadline", async () => {
    const b = track(t.kernel.tasks.claim("q", "B", LEASE, 10_000));
    t.clock.advance(9_999);
    await flush();
    expect(b.done).toBe(false);
    t.clock.advance(1);
    await flush();
    expect(b.value).toEqual({ claimed: false });
    expect(t.kernel.tasks.waits.size).toBe(0);
    const id = await push("later");
    expect((await row(id))!.state).toBe("pending");
  });

  test("a claimer that disconnects is never handed a task", async () => {
    const ac = new AbortController();
    const b = track(t.kernel.tasks.claim("q", "B", LEASE, 30_000, ac.signal));
    await flush();
    ac.abort();
    await flush();
    expect(b.value).toEqual({ claimed: false });
    const id = await push("x");
    expect((await row(id))!.state).toBe("pending");
  });

  test("a claimer that disconnects in the instant a task is pushed is not handed it", async () => {
    const ac = new AbortController();
    const b = track(t.kernel.tasks.claim("q", "B", LEASE, 30_000, ac.signal));
    await flush();
    ac.abort();
    const id = await push("x");
    await flush();
    expect(b.value).toEqual({ claimed: false });
    expect((await row(id))!.state).toBe("pending");
  });
});

describe("retention", () => {
  test("finished tasks are purged after the retention period, pending ones never", async () => {
    const done = await push("done");
    const failed = await push("failed");
    const pending = await push("pending");
    await t.kernel.tasks.complete(done, (await claim()).leaseToken);
    t.clock.advance(1_000);
    await t.kernel.tasks.fail(failed, (await claim()).leaseToken, false);
    const doneAt = (await row(done))!.finished_at!;

    t.clock.advance(doneAt + TASK_RETENTION_MS - t.clock.now() - 1);
    expect((await t.kernel.tasks.list("q")).map((x) => x.id)).toEqual([done, failed, pending]);
    t.clock.advance(1);
    expect((await t.kernel.tasks.list("q")).map((x) => x.id)).toEqual([failed, pending]);
    t.clock.advance(1_000);
    expect((await t.kernel.tasks.list("q")).map((x) => x.id)).toEqual([pending]);
    t.clock.advance(10 * TASK_RETENTION_MS);
    expect((await t.kernel.tasks.list("q")).map((x) => x.id)).toEqual([pending]);
  });
});
