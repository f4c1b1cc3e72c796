// Migrations upgrade a database written by an older airlock without losing what it holds.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { ManualClock } from "../../src/domain/clock.ts";
import { MIGRATIONS, migrate } from "../../src/store/migrate.ts";
import { tempDbPath } from "../domain/support.ts";
import { makeKernel } from "../helpers/kernel.ts";

test("schema v4 keeps held locks and carries every released lock's fence into its row", async () => {
  const db = tempDbPath();
  try {
    // A v3 database: one lock held, one released after three grants, one pool fence.
    const old = new Database(db.path, { create: true, strict: true });
    for (let v = 0; v < 3; v++) old.exec(MIGRATIONS[v]!);
    old.exec("PRAGMA user_version = 3");
    const far = Date.now() + 3600_000;
    old.query("INSERT INTO locks (name, agent_id, token, fence, acquired_at, expires_at) VALUES ('held', 'A', 'tok', 5, 0, ?)").run(far);
    old.exec("INSERT INTO fences (resource, fence) VALUES ('lock:held', 5), ('lock:released', 3), ('pool:heavy', 7)");
    old.close();

    const upgraded = new Database(db.path, { strict: true });
    expect(migrate(upgraded)).toBe(MIGRATIONS.length);
    expect(upgraded.query("SELECT name, agent_id, fence FROM locks ORDER BY name").all()).toEqual([
      { name: "held", agent_id: "A", fence: 5 },
      { name: "released", agent_id: null, fence: 3 },
    ]);
    expect(upgraded.query("SELECT resource FROM fences").all()).toEqual([{ resource: "pool:heavy" }]);
    upgraded.close();

    const k = await makeKernel({ path: db.path, clock: new ManualClock(Date.now()) });
    const next = await k.kernel.locks.acquire({ name: "released", agentId: "B", ttlMs: 60_000, waitMs: 0 });
    expect(next).toMatchObject({ locked: true, fence: 4 });
    expect((await k.kernel.locks.list()).map((l) => [l.name, l.agent_id, l.fence])).toEqual([
      ["held", "A", 5],
      ["released", "B", 4],
    ]);
    expect(await k.kernel.locks.release("held", "tok", undefined)).toBe(true);
    expect(await k.kernel.locks.acquire({ name: "held", agentId: "C", ttlMs: 60_000, waitMs: 0 })).toMatchObject({ fence: 6 });
    k.kernel.close();
    k.store.close();
  } finally {
    db.cleanup();
  }
});

test("schema v6 moves queued slot requests into the waiter lines, in order, and the pools serve them after a restart", async () => {
  const db = tempDbPath();
  try {
    // A v5 database: pool "p" of capacity 1 held by A; B (offered, bound to a process on host
    // m1) and C (queued) in line, C first by seq; slot_requests goes with the migration.
    const old = new Database(db.path, { create: true, strict: true });
    for (let v = 0; v < 5; v++) old.exec(MIGRATIONS[v]!);
    old.exec("PRAGMA user_version = 5");
    const now = Date.now();
    old.query("INSERT INTO pools (name, capacity, offer_seconds, version, updated_at, updated_by, reason) VALUES ('p', 1, 30, 1, ?, 'e', 'r')").run(now);
    old.query("INSERT INTO slots (token, pool, agent_id, weight, reason, fence, acquired_at, expires_at) VALUES ('slotA', 'p', 'A', 1, 'build', 1, ?, ?)").run(now, now + 3600_000);
    const insert = old.query(
      "INSERT INTO slot_requests (token, pool, agent_id, weight, reason, ttl_ms, pid, pgid, pid_start, state, offer_expires_at, since, seq) VALUES (?, 'p', ?, 1, ?, 60000, ?, ?, ?, 'queued', NULL, ?, ?)",
    );
    insert.run("tokC", "C", null, null, null, null, now - 2000, 7);
    insert.run("tokB", "B", "tests", 4242, 4242, "123@m1", now - 1000, 9);
    old.close();

    const upgraded = new Database(db.path, { strict: true });
    expect(migrate(upgraded)).toBe(MIGRATIONS.length);
    expect(upgraded.query("SELECT name FROM sqlite_master WHERE name = 'slot_requests'").all()).toEqual([]);
    const rows = upgraded.query("SELECT token, queue, keys, agent_id, req, ord, attached, daemon, grace_ends FROM waiters ORDER BY ord").all() as any[];
    expect(rows.map((r) => [r.token, r.queue, r.keys, r.agent_id, r.ord, r.attached, r.daemon, r.grace_ends])).toEqual([
      ["tokC", "slot", '["p"]', "C", 7, 0, "local", null],
      ["tokB", "slot", '["p"]', "B", 9, 0, "local", null],
    ]);
    expect(JSON.parse(rows[0].req)).toEqual({ agentId: "C", weight: 1, reason: null, ttlMs: 60000, binding: null, state: "queued", offerExpiresAt: null });
    expect(JSON.parse(rows[1].req).binding).toEqual({ pid: 4242, pgid: 4242, startTime: "123", host: "m1" });
    upgraded.close();

    const k = await makeKernel({ path: db.path, clock: new ManualClock(now) });
    // B's process (pid 4242 with that start time) is not running: its request is withdrawn at start.
    const p = (await k.kernel.pools.list()).find((x) => x.pool === "p");
    expect(p!.waiters.map((w) => [w.agentId, w.state])).toEqual([["C", "queued"]]);
    // The migrated requests resume by their wake_tokens; the release goes to C first.
    expect(await k.kernel.pools.acquire({ agentId: "C", pool: "p", waitMs: 0, wakeToken: "tokC" })).toMatchObject({ granted: false, position: 1, wakeToken: "tokC" });
    expect(await k.kernel.pools.release("slotA")).toBe(true);
    expect(await k.kernel.pools.acquire({ agentId: "C", pool: "p", waitMs: 0, wakeToken: "tokC" })).toMatchObject({ granted: true });
    k.kernel.close();
    k.store.close();
  } finally {
    db.cleanup();
  }
});

test("schema v6 keys the waiter lines by token alone (one b-tree, WITHOUT ROWID)", () => {
  const db = tempDbPath();
  try {
    const upgraded = new Database(db.path, { create: true, strict: true });
    expect(migrate(upgraded)).toBe(MIGRATIONS.length);
    const sql = (upgraded.query("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'waiters'").get() as { sql: string }).sql;
    expect(sql).toContain("WITHOUT ROWID");
    // Only the table's own b-tree: no separate index for the primary key.
    expect(upgraded.query("SELECT name FROM sqlite_master WHERE tbl_name = 'waiters' AND type = 'index'").all()).toEqual([]);
    const place = upgraded.query("INSERT INTO waiters (token, queue, keys, req, ord, since, attached, daemon) VALUES ('t1', 'lock', '[]', '{}', ?, 1, 0, 'local')");
    place.run(3);
    // The token is the key: a second place under it is refused.
    expect(() => place.run(4)).toThrow();
    expect(upgraded.query("SELECT token, ord FROM waiters").all()).toEqual([{ token: "t1", ord: 3 }]);
    upgraded.close();
  } finally {
    db.cleanup();
  }
});

test("schema v12 keeps every counter and refuses a value past the exact integer range", async () => {
  const db = tempDbPath();
  try {
    const old = new Database(db.path, { create: true, strict: true });
    for (let v = 0; v < 11; v++) old.exec(MIGRATIONS[v]!);
    old.exec("PRAGMA user_version = 11");
    old.query("INSERT INTO counters (name, value) VALUES ('a', 7), ('edge', ?), ('low', ?)").run(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER);
    old.close();

    const upgraded = new Database(db.path, { strict: true });
    expect(migrate(upgraded)).toBe(MIGRATIONS.length);
    expect(upgraded.query("SELECT name, value FROM counters ORDER BY name").all()).toEqual([
      { name: "a", value: 7 },
      { name: "edge", value: Number.MAX_SAFE_INTEGER },
      { name: "low", value: -Number.MAX_SAFE_INTEGER },
    ]);
    expect(() => upgraded.query("UPDATE counters SET value = value + 1 WHERE name = 'edge'").run()).toThrow("counters_exact");
    upgraded.close();

    const k = await makeKernel({ path: db.path, clock: new ManualClock(Date.now()) });
    expect(await k.kernel.counters.increment("a", 1)).toBe(8);
    await expect(k.kernel.counters.increment("low", -1)).rejects.toThrow("exact integer range");
    expect(await k.kernel.counters.get("low")).toBe(-Number.MAX_SAFE_INTEGER);
    k.kernel.close();
    k.store.close();
  } finally {
    db.cleanup();
  }
});
