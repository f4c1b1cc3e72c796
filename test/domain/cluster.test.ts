// The lines on a shared store (src/domain/lines.ts, src/domain/cluster.ts), with kernels of
// their own on one PostgreSQL database (AIRLOCK_TEST_PG; skipped without it) and manual
// clocks: a daemon that has left (a graceful stop, or dead and forgotten) leaves its waiters
// in line, detached, with their grace; its agents resume them on another daemon; and the
// places expire once, on whichever daemon gets there first, when the grace ends.
import { afterEach, expect, test } from "bun:test";
import { ManualClock } from "../../src/domain/clock.ts";
import { createKernel, type Kernel } from "../../src/domain/kernel.ts";
import { LOCK_WAKE_GRACE_MS } from "../../src/domain/locks.ts";
import { POOL_WAKE_GRACE_MS } from "../../src/domain/pools/index.ts";
import { openPgStore, type PgStore } from "../../src/store/pg/index.ts";
import { describePg, freshDatabase, withClient } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

const START = Date.now();

interface Daemon {
  kernel: Kernel;
  store: PgStore;
  clock: ManualClock;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function database(): Promise<string> {
  const db = await freshDatabase();
  cleanups.push(() => db.drop());
  return db.url;
}

async function daemon(url: string): Promise<Daemon> {
  const store = await openPgStore(url);
  const clock = new ManualClock(START);
  const kernel = await createKernel({ store, clock });
  cleanups.push(async () => {
    kernel.close();
    await store.close(); // again after stop(): it returns at once
  });
  return { kernel, store, clock };
}

/** A graceful stop: the kernel answers its calls, the store deletes the daemon's row. */
async function stop(d: Daemon): Promise<void> {
  d.kernel.close();
  await d.store.close();
}

const pool = (d: Daemon) => d.kernel.pools.list().then((ps) => ps.find((p) => p.pool === "p")!);
const abandoned = async (d: Daemon) => (await d.kernel.journal.since(0)).filter((e) => e.kind === "pool.released" && /abandoned/.test(e.reason ?? ""));

describePg("a daemon that has left", () => {
  test("after a graceful stop its waiters stay in line, detached, resume on another daemon, and expire at their grace, once", async () => {
    const url = await database();
    const x = await daemon(url);
    await x.kernel.pools.configure({ pool: "p", capacity: 1, expectedVersion: 0, author: "t", reason: "r" });
    expect(await x.kernel.pools.acquire({ agentId: "A", pool: "p", waitMs: 0, ttlMs: 3 * 3600_000 })).toMatchObject({ granted: true });
    expect(await x.kernel.pools.acquire({ agentId: "B", pool: "p", waitMs: 0 })).toMatchObject({ granted: false, position: 1 });
    const c = await x.kernel.pools.acquire({ agentId: "C", pool: "p", waitMs: 0 });
    if (c.granted) throw new Error("C must queue behind A and B");
    // A lock waiter whose call timed out on x: detached, with the lock grace.
    expect(await x.kernel.locks.acquire({ name: "L", agentId: "A", ttlMs: 3600_000, waitMs: 0 })).toMatchObject({ locked: true });
    const waiting = x.kernel.locks.acquire({ name: "L", agentId: "W", ttlMs: 60_000, waitMs: 1_000 });
    // Blocked (its deadline armed on x's clock) before the clock moves past the deadline.
    await until("W blocked on L", async () => (await x.kernel.locks.list()).find((l) => l.name === "L")?.waiters.some((w) => w.agentId === "W" && w.attached), 10_000);
    x.clock.advance(1_000);
    expect(await waiting).toMatchObject({ locked: false, wake: { position: 1 } });
    await stop(x);

    const y = await daemon(url);
    const z = await daemon(url);
    for (const d of [y, z]) {
      expect((await pool(d)).waiters.map((w) => [w.agentId, w.state, w.blocked])).toEqual([
        ["B", "queued", false],
        ["C", "queued", false],
      ]);
      expect((await d.kernel.locks.list()).find((l) => l.name === "L")!.waiters).toMatchObject([{ agentId: "W", attached: false }]);
    }
    // The lock grace ends (it started when W's call timed out on x): W leaves, on both.
    for (const d of [y, z]) d.clock.advance(1_000 + LOCK_WAKE_GRACE_MS);
    for (const d of [y, z]) expect((await d.kernel.locks.list()).find((l) => l.name === "L")!.waiters).toEqual([]);
    expect((await pool(y)).waiters.map((w) => w.agentId)).toEqual(["B", "C"]);

    // C's agent calls on y: its own place, behind B, and a fresh grace.
    expect(await y.kernel.pools.acquire({ agentId: "C", pool: "p", waitMs: 0, wakeToken: c.wakeToken })).toMatchObject({ granted: false, position: 2 });

    // B's grace (an hour from its call on x) ends: B leaves, on both daemons, journalled once.
    for (const d of [y, z]) d.clock.advance(POOL_WAKE_GRACE_MS - 1_000 - LOCK_WAKE_GRACE_MS);
    expect((await pool(z)).waiters.map((w) => w.agentId)).toEqual(["C"]);
    expect((await pool(y)).waiters.map((w) => w.agentId)).toEqual(["C"]);
    expect((await abandoned(y)).map((e) => e.agentId)).toEqual(["B"]);
  });

  test("a dead daemon's waiters stay in line once it is forgotten, and expire at their grace", async () => {
    const url = await database();
    const y = await daemon(url);
    await y.kernel.pools.configure({ pool: "p", capacity: 1, expectedVersion: 0, author: "t", reason: "r" });
    expect(await y.kernel.pools.acquire({ agentId: "A", pool: "p", waitMs: 0, ttlMs: 3 * 3600_000 })).toMatchObject({ granted: true });
    // A daemon silent for longer than FORGET_AFTER_MS, whose agent G waited (blocked) in p's line.
    const req = { agentId: "G", weight: 1, reason: null, ttlMs: 60_000, binding: null, state: "queued", offerExpiresAt: null };
    await withClient(url, async (sql) => {
      await sql.unsafe("INSERT INTO daemons (id, host, pid, started_at, seen_at) VALUES ('ghost', 'h', 1, 0, (extract(epoch from clock_timestamp()) * 1000)::bigint - 600000)");
      await sql.unsafe(
        "INSERT INTO waiters (token, queue, keys, agent_id, req, ord, since, attached, daemon, grace_ends) VALUES ('tokG', 'slot', '[\"p\"]', 'G', $1, 1000000, $2, true, 'ghost', NULL)",
        [JSON.stringify(req), START],
      );
      await sql.unsafe("UPDATE airlock_sync SET version = version + 1");
    });
    const z = await daemon(url);
    // Forgotten (its row goes), its waiter stays: detached, its grace started now.
    expect((await pool(z)).waiters.map((w) => [w.agentId, w.blocked])).toEqual([["G", false]]);
    expect((await pool(y)).waiters.map((w) => [w.agentId, w.blocked])).toEqual([["G", false]]);
    await withClient(url, async (sql) => {
      expect(await sql.unsafe("SELECT id FROM daemons WHERE id = 'ghost'")).toEqual([]);
      const [row] = (await sql.unsafe("SELECT grace_ends FROM waiters WHERE token = 'tokG'")) as { grace_ends: string }[];
      expect(Number(row!.grace_ends)).toBe(START + POOL_WAKE_GRACE_MS);
    });
    for (const d of [y, z]) d.clock.advance(POOL_WAKE_GRACE_MS - 1);
    expect((await pool(y)).waiters).toHaveLength(1);
    for (const d of [z, y]) d.clock.advance(1);
    expect((await pool(y)).waiters).toEqual([]);
    expect((await pool(z)).waiters).toEqual([]);
    expect((await abandoned(z)).map((e) => e.agentId)).toEqual(["G"]);
  });
});
