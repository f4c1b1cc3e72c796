import { describe, expect, test } from "bun:test";
import { spawn } from "bun";
import type { SlotGrant, SlotRefusal, SlotRequest, SlotResult } from "../../src/domain/pools/index.ts";
import { machinePoolName, PROCESS_WATCH_MS } from "../../src/domain/pools/index.ts";
import { makeKernel, useKernel } from "../helpers/kernel.ts";
import { prng } from "../reliability/support.ts";
import { flush, tempDbPath, track } from "./support.ts";

const t = useKernel();
const TTL = 900_000;

function acquire(agentId: string, more: Partial<SlotRequest> = {}, signal?: AbortSignal): Promise<SlotResult> {
  return t.kernel.pools.acquire({ agentId, pool: "heavy", weight: 1, waitMs: 0, ttlMs: TTL, ...more }, signal);
}
async function granted(agentId: string, more: Partial<SlotRequest> = {}): Promise<SlotGrant> {
  const r = await acquire(agentId, more);
  if (!r.granted) throw new Error(`${agentId} was queued at ${r.position}`);
  return r;
}
async function queued(agentId: string, more: Partial<SlotRequest> = {}): Promise<SlotRefusal> {
  const r = await acquire(agentId, more);
  if (r.granted) throw new Error(`${agentId} was granted`);
  return r;
}
const pool = async (name = "heavy") => (await t.kernel.pools.list()).find((p) => p.pool === name)!;
const states = async (name = "heavy") => (await pool(name)).waiters.map((w) => `${w.agentId}:${w.state}`);
const kinds = async () => (await t.kernel.journal.since(0)).map((e) => `${e.kind} ${e.agentId ?? ""}`.trim());
async function configure(capacity: number, o: { pool?: string; expectedVersion?: number; offerSeconds?: number } = {}) {
  const name = o.pool ?? "heavy";
  const version = o.expectedVersion ?? (await t.kernel.pools.list()).find((p) => p.pool === name)?.version ?? 0;
  return t.kernel.pools.configure({ pool: name, capacity, expectedVersion: version, author: "test", reason: "test", offerSeconds: o.offerSeconds });
}

describe("pools: FIFO with offers", () => {
  test("the three-agent story: granted, queued while working, offer claimed, a missed window paused, rejoined, claimed", async () => {
    const a = await granted("A", { reason: "cargo test" });
    const b = await queued("B", { reason: "npm test" });
    const c = await queued("C", { reason: "build docs" });
    expect([b.position, c.position]).toEqual([1, 2]);
    expect(c.ahead.map((x) => x.agentId)).toEqual(["B"]);
    expect(c.holders).toEqual([{ agentId: "A", reason: "cargo test", weight: 1, heldSeconds: 0 }]);

    await t.kernel.pools.release(a.token);
    expect(await states()).toEqual(["B:offered", "C:queued"]);
    expect((await pool()).offered).toBe(1);
    // Someone new cannot take the offered capacity.
    expect((await queued("D")).position).toBe(3);
    const bGot = await granted("B", { wakeToken: b.wakeToken });
    expect(bGot.pool).toBe("heavy");

    await t.kernel.pools.release(bGot.token);
    expect(await states()).toEqual(["C:offered", "D:queued"]);
    t.clock.advance(30_000); // C is away past its offer window
    expect(await states()).toEqual(["C:paused", "D:offered"]);
    const dGot = await granted("D");
    // C comes back: it rejoins at the tail, and is offered (and claims) when D is done.
    const cBack = await queued("C", { wakeToken: c.wakeToken });
    expect(cBack.position).toBe(1);
    expect(await states()).toEqual(["C:queued"]);
    await t.kernel.pools.release(dGot.token);
    expect(await states()).toEqual(["C:offered"]);
    await granted("C", { wakeToken: c.wakeToken });

    expect(await kinds()).toEqual([
      "pool.granted A",
      "pool.queued B",
      "pool.queued C",
      "pool.released A",
      "pool.offered B",
      "pool.queued D",
      "pool.granted B",
      "pool.released B",
      "pool.offered C",
      "pool.offer_expired C",
      "pool.paused C",
      "pool.offered D",
      "pool.granted D",
      "pool.queued C",
      "pool.released D",
      "pool.offered C",
      "pool.granted C",
    ]);
  });

  test("a blocked call is granted directly when capacity frees", async () => {
    const a = await granted("A");
    const b = track(acquire("B", { waitMs: 10_000 }));
    await flush();
    await t.kernel.pools.release(a.token);
    await flush();
    expect(b.value).toMatchObject({ granted: true, pool: "heavy" });
    expect((await pool()).inUse).toBe(1);
  });

  test("a blocked call that times out stays queued with its wake_token", async () => {
    await granted("A");
    const b = acquire("B", { waitMs: 2_000 });
    t.clock.advance(2_000);
    const r = await b;
    expect(r).toMatchObject({ granted: false, position: 1 });
    expect(await states()).toEqual(["B:queued"]);
  });

  test("an agent that calls again without its token resumes its own request: one place per agent", async () => {
    await granted("A");
    const first = await queued("B");
    await queued("C");
    const again = await queued("B");
    expect(again.wakeToken).toBe(first.wakeToken);
    expect(again.position).toBe(1);
    expect((await pool()).queued).toBe(2);
  });

  test("a grant to a blocked call whose client is gone passes on, and that request is paused", async () => {
    const a = await granted("A");
    const gone = new AbortController();
    const b = track(acquire("B", { waitMs: 10_000 }, gone.signal));
    const c = track(acquire("C", { waitMs: 10_000 }));
    await flush();
    t.store.tx(function* () {
      t.kernel.pools.release(a.token);
      gone.abort();
    });
    await flush();
    expect(b.value).toMatchObject({ granted: false }); // an answer nobody reads
    expect(c.value).toMatchObject({ granted: true });
    expect(await states()).toEqual(["B:paused"]);
    expect((await pool()).inUse).toBe(1);
  });

  test("held + offered never exceeds capacity under random acquire, release, expiry and reconfiguration (seeded)", async () => {
    const seed = Number(process.env.POOLS_SEED ?? Date.now() % 1_000_000);
    console.log(`pools invariant seed ${seed} (replay with POOLS_SEED=${seed})`);
    const r = prng(seed);
    const held: string[] = [];
    const wakes = new Map<string, string>();
    for (let i = 0; i < 600; i++) {
      const op = r.int(0, 9);
      const agent = `ag${r.int(0, 7)}`;
      if (op <= 3) {
        const res = await acquire(agent, { weight: r.int(1, 3), wakeToken: wakes.get(agent) }).catch(() => null);
        if (res?.granted) held.push(res.token);
        else if (res) wakes.set(agent, res.wakeToken!);
      } else if (op <= 5 && held.length > 0) {
        await t.kernel.pools.release(held.splice(r.int(0, held.length - 1), 1)[0]!);
      } else if (op === 6) {
        t.clock.advance(r.int(1_000, 40_000));
      } else if (op === 7) {
        await configure(r.int(1, 5));
      } else if (op === 8 && wakes.size > 0) {
        await t.kernel.pools.release([...wakes.values()][r.int(0, wakes.size - 1)]!);
      }
      const p = await pool();

      // Lowering capacity never revokes: held may exceed it, but then nothing is offered.
      expect(p.offered).toBeLessThanOrEqual(Math.max(0, p.capacity - p.inUse));
      if (p.inUse + p.offered > p.capacity) expect(p.offered).toBe(0);
    }
  });
});

describe("pools: weights", () => {
  test("a heavier request at the head is not overtaken by a lighter one behind it", async () => {
    await configure(3);
    const big = await granted("X", { weight: 2 });
    await queued("H", { weight: 2 });
    const light = await queued("L", { weight: 1 });
    expect(light.position).toBe(2);
    expect(await pool()).toMatchObject({ inUse: 2, offered: 0 });
    await t.kernel.pools.release(big.token);
    expect(await states()).toEqual(["H:offered", "L:offered"]);
    expect((await pool()).offered).toBe(3);
  });

  test("a weight above the capacity is refused: it could never be granted", async () => {
    await expect(acquire("A", { weight: 2 })).rejects.toThrow("weight must be <= the pool's capacity (1) (got 2)");
    expect((await pool()).queued).toBe(0);
  });
});

describe("pools: a request that comes back keeps what it queued with", () => {
  /** Everything a refused call could have changed: the lines, the holders, the journal. */
  const everything = async () => JSON.stringify({ pools: await t.kernel.pools.list(), journal: await kinds() });

  test("with its wake_token and no weight, it is offered and granted the weight it queued with", async () => {
    await configure(2);
    const a = await granted("A", { weight: 2 });
    const b = await queued("B", { weight: 2, reason: "cargo test", ttlMs: 60_000 });
    // A poll without weight, reason or ttl keeps its place, and its weight.
    const poll = await queued("B", { wakeToken: b.wakeToken, weight: undefined, ttlMs: undefined });
    expect(poll.wakeToken).toBe(b.wakeToken);
    expect((await pool()).waiters).toMatchObject([{ agentId: "B", weight: 2, reason: "cargo test", state: "queued" }]);
    await t.kernel.pools.release(a.token);
    expect((await pool()).offered).toBe(2);
    t.clock.advance(5_000);
    const got = await granted("B", { wakeToken: b.wakeToken, weight: undefined, ttlMs: undefined });
    expect(got.weight).toBe(2);
    expect(got.expiresAt).toBe(t.clock.now() + 60_000); // its own ttl, not the default
    expect(await pool()).toMatchObject({ inUse: 2, offered: 0, queued: 0 });
    expect((await pool()).holders).toMatchObject([{ agentId: "B", weight: 2, reason: "cargo test" }]);
  });

  test("a blocked call that resumes without weight is granted the weight it queued with", async () => {
    await configure(3);
    const a = await granted("A", { weight: 3 });
    const b = await queued("B", { weight: 3 });
    const again = track(acquire("B", { wakeToken: b.wakeToken, weight: undefined, waitMs: 10_000 }));
    await flush();
    await t.kernel.pools.release(a.token);
    await flush();
    expect(again.value).toMatchObject({ granted: true, weight: 3 });
  });

  test("a different weight is refused, naming weight and the way out, and changes nothing", async () => {
    await configure(3);
    await granted("A", { weight: 3 });
    const b = await queued("B", { weight: 2 });
    const before = await everything();
    const rule = "weight must be the weight your queued request asked for (2) when the call resumes it (got 3)";
    await expect(acquire("B", { wakeToken: b.wakeToken, weight: 3 })).rejects.toThrow(rule);
    await expect(acquire("B", { weight: 3 })).rejects.toThrow(rule); // found by agent and pool, without the token
    await expect(acquire("B", { wakeToken: b.wakeToken, weight: 1 })).rejects.toThrow("release_slot with its wake_token");
    expect(await everything()).toBe(before);
    // The same weight, given again, is the ordinary poll.
    expect((await queued("B", { wakeToken: b.wakeToken, weight: 2 })).position).toBe(1);
  });

  test("a fractional weight or capacity is refused, not truncated, and changes nothing", async () => {
    await configure(2);
    await granted("A");
    const b = await queued("B", { weight: 2 });
    const before = await everything();
    await expect(acquire("C", { weight: 1.5 })).rejects.toThrow("weight must be a whole number >= 1 (got 1.5)");
    await expect(acquire("B", { wakeToken: b.wakeToken, weight: 2.5 })).rejects.toThrow("weight must be a whole number >= 1 (got 2.5)");
    await expect(configure(1.5)).rejects.toThrow("capacity must be a whole number >= 1 (got 1.5)");
    await expect(configure(2.5, { pool: "new", expectedVersion: 0 })).rejects.toThrow("capacity must be a whole number >= 1 (got 2.5)");
    expect(await everything()).toBe(before);
    expect((await pool()).capacity).toBe(2);
  });
});

describe("pools: this machine's own budget", () => {
  test("machine:<host>/heavy exists without configuring, one job at a time, apart from heavy", async () => {
    const mine = machinePoolName();
    expect(mine).toMatch(/^machine:.+\/heavy$/);
    expect((await acquire("a", { pool: mine })).granted).toBe(true);
    expect((await acquire("b", { pool: mine })).granted).toBe(false); // capacity 1, like heavy
    expect((await acquire("c")).granted).toBe(true); // heavy is another budget
    expect(await pool(mine)).toMatchObject({ capacity: 1, version: 1 });
    // Configured like any pool, from its first version.
    expect(await t.kernel.pools.configure({ pool: mine, capacity: 2, expectedVersion: 1, author: "lead", reason: "two builds fit" })).toEqual({ configured: true, version: 2 });
    expect((await acquire("b", { pool: mine })).granted).toBe(true);
    // Another machine's pool is not made up: it exists only once someone configures it.
    await expect(acquire("d", { pool: "machine:some-other-box/heavy" })).rejects.toThrow("unknown pool: machine:some-other-box/heavy");
  });
});

describe("pools: configure_pool", () => {
  test("is compare-and-set on version and records author and reason", async () => {
    expect((await pool()).version).toBe(1);
    expect(await t.kernel.pools.configure({ pool: "heavy", capacity: 4, expectedVersion: 0, author: "x", reason: "r" })).toMatchObject({
      configured: false,
      version: 1,
    });
    expect(await t.kernel.pools.configure({ pool: "heavy", capacity: 4, expectedVersion: 1, author: "lead", reason: "16 cores" })).toEqual({
      configured: true,
      version: 2,
    });
    expect(await pool()).toMatchObject({ capacity: 4, version: 2 });
    const e = (await t.kernel.journal.since(0)).at(-1)!;
    expect(e).toMatchObject({ kind: "pool.configured", resource: "heavy", agentId: "lead", reason: "16 cores", data: { capacity: 4, previous_capacity: 1 } });
  });

  test("creates a new pool only with expected_version 0; an unknown pool is an error", async () => {
    await expect(acquire("A", { pool: "gpu" })).rejects.toThrow("unknown pool: gpu");
    expect(await configure(2, { pool: "gpu", expectedVersion: 1 })).toMatchObject({ configured: false, version: 0 });
    expect(await configure(2, { pool: "gpu", expectedVersion: 0 })).toEqual({ configured: true, version: 1 });
    expect((await acquire("A", { pool: "gpu" })).granted).toBe(true);
  });

  test("raising capacity serves the queue at once; lowering it revokes nothing", async () => {
    const a = await granted("A");
    const b = track(acquire("B", { waitMs: 10_000 }));
    await queued("C");
    await flush();
    await configure(3);
    await flush();
    expect(b.value).toMatchObject({ granted: true });
    expect(await states()).toEqual(["C:offered"]);
    await configure(1);
    expect(await pool()).toMatchObject({ capacity: 1, inUse: 2, offered: 0 });
    expect(await states()).toEqual(["C:queued"]);
    await t.kernel.pools.release(a.token);
    expect(await states()).toEqual(["C:queued"]); // still one over capacity
  });
});

describe("pools: lifetimes", () => {
  test("an unbound slot expires at its ttl and the next request is served", async () => {
    await granted("A", { ttlMs: 5_000 });
    await queued("B");
    t.clock.advance(4_999);
    expect((await pool()).inUse).toBe(1);
    t.clock.advance(1);
    expect((await pool()).inUse).toBe(0);
    expect(await states()).toEqual(["B:offered"]);
    expect((await t.kernel.journal.since(0)).find((e) => e.kind === "pool.released")?.reason).toBe("ttl expired");
  });

  test("renew moves the expiry; release is idempotent and can withdraw a queued request", async () => {
    const a = await granted("A", { ttlMs: 5_000 });
    t.clock.advance(4_000);
    expect(await t.kernel.pools.renew(a.token, 10_000)).toEqual({ renewed: true, expiresAt: t.clock.now() + 10_000 });
    t.clock.advance(9_000);
    expect((await pool()).inUse).toBe(1);
    const b = await queued("B");
    expect(await t.kernel.pools.release(b.wakeToken!)).toBe(true);
    expect((await pool()).queued).toBe(0);
    expect(await t.kernel.pools.release(a.token)).toBe(true);
    expect(await t.kernel.pools.release(a.token)).toBe(false);
    expect(await t.kernel.pools.renew(a.token, 1_000)).toEqual({ renewed: false, error: "store: slot not found" });
  });

  test("a departing agent releases its unbound slots and leaves the line", async () => {
    await t.kernel.presence.register("A", 10_000);
    await t.kernel.presence.register("B", 10_000);
    await granted("A");
    await queued("B");
    await queued("C");
    await t.kernel.presence.unregister("B");
    expect(await states()).toEqual(["C:queued"]);
    t.clock.advance(10_000); // A's heartbeat lapses
    expect((await pool()).inUse).toBe(0);
    expect(await states()).toEqual(["C:offered"]);
  });

  test("holders and queued requests, with their order and offers, survive a restart", async () => {
    const db = tempDbPath();
    try {
      let k = await makeKernel({ path: db.path });
      const go = (agentId: string, more: Partial<SlotRequest> = {}) =>
        k.kernel.pools.acquire({ agentId, pool: "heavy", weight: 1, waitMs: 0, ttlMs: TTL, ...more });
      const a = (await go("A")) as SlotGrant;
      const tokens: string[] = [];
      for (const n of ["B", "C", "D"]) tokens.push(((await go(n)) as SlotRefusal).wakeToken!);
      await k.kernel.pools.release(a.token);
      const before = (await k.kernel.pools.list())[0]!.waiters.map((w) => `${w.agentId}:${w.state}`);
      expect(before).toEqual(["B:offered", "C:queued", "D:queued"]);
      k.kernel.close();
      k.store.close();

      k = await makeKernel({ path: db.path, clock: k.clock });
      expect((await k.kernel.pools.list())[0]!.waiters.map((w) => `${w.agentId}:${w.state}`)).toEqual(before);
      const d = (await go("D", { wakeToken: tokens[2] })) as SlotRefusal;
      expect(d).toMatchObject({ granted: false, position: 3, wakeToken: tokens[2] });
      expect((await go("B", { wakeToken: tokens[0] })).granted).toBe(true);
      k.kernel.close();
      k.store.close();
    } finally {
      db.cleanup();
    }
  });
});

describe("pools: process-bound slots", () => {
  test("refuses pid 1, the daemon's own pid, and a pid that is not running", async () => {
    await expect(acquire("A", { pid: 1 })).rejects.toThrow("pid must not be 1");
    await expect(acquire("A", { pid: process.pid })).rejects.toThrow("pid must not be the daemon's own");
    await expect(acquire("A", { pid: 2 ** 31 - 2 })).rejects.toThrow("pid must be a live process");
    expect((await pool()).inUse).toBe(0);
  });

  test("is held while its process group lives, whatever its age, and released once it exits", async () => {
    const child = spawn(["sleep", "30"], { detached: true, stdout: "ignore", stderr: "ignore" });
    try {
      const g = await granted("A", { pid: child.pid, ttlMs: 1_000 });
      expect(g.expiresAt).toBeNull();
      await queued("B");
      t.clock.advance(3000_000); // far past any ttl
      expect((await pool()).inUse).toBe(1);
      child.kill(9);
      await child.exited;
      t.clock.advance(PROCESS_WATCH_MS);
      expect((await pool()).inUse).toBe(0);
      expect(await states()).toEqual(["B:offered"]);
      expect((await t.kernel.journal.since(0)).find((e) => e.kind === "pool.released")?.reason).toBe("process exited");
    } finally {
      child.kill(9);
    }
  });

  test("a queued request bound to a process leaves the line when the process exits", async () => {
    await granted("A");
    const child = spawn(["sleep", "30"], { detached: true, stdout: "ignore", stderr: "ignore" });
    await queued("B", { pid: child.pid });
    await queued("C");
    child.kill(9);
    await child.exited;
    t.clock.advance(PROCESS_WATCH_MS);
    expect(await states()).toEqual(["C:queued"]);
  });
});
