// The lock tools over the wire: lock_resource, unlock_resource, renew_lock, list_locks,
// lock_resources. Time is a ManualClock, so waits and expiries are exact.
import { describe, expect, test } from "bun:test";
import { isSettled, makeApp, until } from "./rpc.ts";

const keys = (o: object) => Object.keys(o).sort();

describe("lock_resource", () => {
  test("grants a free lock with locked, lock_token and expires_in_seconds (plus fence)", async () => {
    const a = await makeApp();
    const r = await a.call("lock_resource", { name: "npm-install", agent_id: "agent:a" });
    expect(keys(r)).toEqual(["expires_in_seconds", "fence", "lock_token", "locked"]);
    expect(r.locked).toBe(true);
    expect(r.lock_token).toMatch(/^[0-9a-f]{32}$/);
    expect(r.expires_in_seconds).toBe(900);
    expect(typeof r.fence).toBe("number");
  });

  test("a contended lock answers locked:false with held_by and the holder's expiry", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 100 });
    a.clock.advance(30_000);
    const r = await a.call("lock_resource", { name: "r", agent_id: "b" });
    expect(r).toEqual({ locked: false, held_by: "a", expires_in_seconds: 70 });
  });

  test("is not re-entrant: the holder itself is refused", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a" });
    expect((await a.call("lock_resource", { name: "r", agent_id: "a" })).locked).toBe(false);
  });

  test("fences grow strictly per resource", async () => {
    const a = await makeApp();
    const first = await a.call("lock_resource", { name: "r", agent_id: "a" });
    await a.call("unlock_resource", { name: "r", lock_token: first.lock_token });
    const second = await a.call("lock_resource", { name: "r", agent_id: "a" });
    expect(second.fence).toBeGreaterThan(first.fence);
  });

  for (const ttl of [0, -5, 0.5, -0.9]) {
    test(`ttl_seconds ${ttl} is refused with store: ttlSeconds must be > 0, and nothing is locked`, async () => {
      const a = await makeApp();
      expect(await a.callError("lock_resource", { name: "r", agent_id: "a", ttl_seconds: ttl })).toBe("store: ttlSeconds must be > 0");
      expect(await a.call("list_locks")).toEqual([]);
    });
  }

  test("ttl_minutes 0 is refused like ttl_seconds 0", async () => {
    const a = await makeApp();
    expect(await a.callError("lock_resource", { name: "r", agent_id: "a", ttl_minutes: 0 })).toBe("store: ttlSeconds must be > 0");
    expect(await a.call("list_locks")).toEqual([]);
  });

  test("ttl_seconds is truncated toward zero (10.9 → 10)", async () => {
    const a = await makeApp();
    expect((await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 10.9 })).expires_in_seconds).toBe(10);
  });

  test("ttl_minutes is an alias for 60 × seconds", async () => {
    const a = await makeApp();
    expect((await a.call("lock_resource", { name: "r", agent_id: "a", ttl_minutes: 2 })).expires_in_seconds).toBe(120);
    expect((await a.call("lock_resource", { name: "s", agent_id: "a", ttl_minutes: 1.5 })).expires_in_seconds).toBe(60);
  });

  test("ttl_seconds wins over ttl_minutes", async () => {
    const a = await makeApp();
    expect((await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 30, ttl_minutes: 5 })).expires_in_seconds).toBe(30);
  });

  test("a lock expires after its TTL and is free again", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 10 });
    a.clock.advance(10_000);
    expect(await a.call("list_locks")).toEqual([]);
    const r = await a.call("lock_resource", { name: "r", agent_id: "b" });
    expect(r.locked).toBe(true);
  });

  test("wait_seconds 500 does not error: it is clamped to 50", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a" });
    const p = a.call("lock_resource", { name: "r", agent_id: "b", wait_seconds: 500 });
    await until(() => a.kernel.locks.waits.size === 1, "b to wait");
    a.clock.advance(49_999);
    expect(await isSettled(p)).toBe(false);
    a.clock.advance(1);
    const r = await p;
    expect(r.locked).toBe(false);
    expect(r.held_by).toBe("a");
  });

  test("a negative wait_seconds is clamped to 0: the call answers at once", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a" });
    expect(await a.call("lock_resource", { name: "r", agent_id: "b", wait_seconds: -10 })).toEqual({ locked: false, held_by: "a", expires_in_seconds: 900 });
    expect(a.kernel.locks.waits.size).toBe(0);
  });

  test("a free lock is granted at once whatever wait_seconds says", async () => {
    const a = await makeApp();
    expect((await a.call("lock_resource", { name: "r", agent_id: "a", wait_seconds: 500 })).locked).toBe(true);
  });

  test("a blocked call is handed the lock when the holder unlocks", async () => {
    const a = await makeApp();
    const held = await a.call("lock_resource", { name: "r", agent_id: "a" });
    const p = a.call("lock_resource", { name: "r", agent_id: "b", wait_seconds: 20 });
    await until(() => a.kernel.locks.waits.size === 1, "b to wait");
    expect(await a.call("unlock_resource", { name: "r", lock_token: held.lock_token })).toEqual({ released: true });
    const r = await p;
    expect(r.locked).toBe(true);
    expect((await a.call("list_locks"))[0].agent_id).toBe("b");
  });

  test("a timed-out wait adds wake_token, queue_position and retry_with", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a" });
    const p = a.call("lock_resource", { name: "r", agent_id: "b", wait_seconds: 5 });
    await until(() => a.kernel.locks.waits.size === 1, "b to wait");
    a.clock.advance(5_000);
    const r = await p;
    expect(keys(r)).toEqual(["expires_in_seconds", "held_by", "locked", "queue_position", "retry_with", "wake_token"]);
    expect(r.locked).toBe(false);
    expect(r.held_by).toBe("a");
    expect(r.expires_in_seconds).toBe(895);
    expect(r.queue_position).toBe(1);
    expect(r.retry_with).toBe(`call lock_resource again with wake_token=${r.wake_token} to keep your place in line`);
    // Calling again with the token resumes the place in line; a second waiter queues behind it.
    expect((await a.call("lock_resource", { name: "r", agent_id: "b", wake_token: r.wake_token })).queue_position).toBe(1);
  });

  test("a client that disconnects while blocked is never handed the lock", async () => {
    const a = await makeApp();
    const held = await a.call("lock_resource", { name: "r", agent_id: "a" });
    const ac = new AbortController();
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "lock_resource", arguments: { name: "r", agent_id: "gone", wait_seconds: 30 } } });
    const p = a.send({ body, signal: ac.signal });
    await until(() => a.kernel.locks.waits.size === 1, "the call to wait");
    ac.abort();
    await until(async () => (await a.kernel.locks.list())[0]?.waiters[0]?.attached === false, "the waiter to detach");
    await p.catch(() => undefined);
    await a.call("unlock_resource", { name: "r", lock_token: held.lock_token });
    expect(await a.call("list_locks")).toEqual([]);
  });
});

describe("unlock_resource", () => {
  test("releases by lock_token", async () => {
    const a = await makeApp();
    const l = await a.call("lock_resource", { name: "r", agent_id: "a" });
    const r = await a.call("unlock_resource", { name: "r", lock_token: l.lock_token });
    expect(r).toEqual({ released: true });
    expect(await a.call("list_locks")).toEqual([]);
  });

  test("a wrong token releases nothing and never falls back to agent_id", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a" });
    expect(await a.call("unlock_resource", { name: "r", lock_token: "f".repeat(32), agent_id: "a" })).toEqual({ released: false });
    expect(await a.call("list_locks")).toHaveLength(1);
  });

  test("without a token, agent_id equal to the holder releases it (v1 path)", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a" });
    expect(await a.call("unlock_resource", { name: "r", agent_id: "b" })).toEqual({ released: false });
    expect(await a.call("unlock_resource", { name: "r", agent_id: "a" })).toEqual({ released: true });
    expect(await a.call("list_locks")).toEqual([]);
  });

  test("releasing a lock nobody holds answers released:false", async () => {
    expect(await (await makeApp()).call("unlock_resource", { name: "nothing", lock_token: "abc" })).toEqual({ released: false });
  });

  test("with neither lock_token nor agent_id it is an error and the lock stays", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a" });
    expect(await a.callError("unlock_resource", { name: "r" })).toBe("missing lock_token or agent_id");
    expect(await a.callError("unlock_resource", { name: "r", lock_token: "", agent_id: "" })).toMatch(/^missing (lock_token|agent_id)/);
    expect(await a.call("list_locks")).toHaveLength(1);
  });

  test("a missing name is an error", async () => {
    expect(await (await makeApp()).callError("unlock_resource", { lock_token: "x" })).toBe("missing name");
  });
});

describe("renew_lock", () => {
  test("by token: expiry becomes now + ttl_seconds", async () => {
    const a = await makeApp();
    const l = await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 10 });
    a.clock.advance(8_000);
    expect(await a.call("renew_lock", { name: "r", lock_token: l.lock_token, ttl_seconds: 30 })).toEqual({ renewed: true, expires_in_seconds: 30 });
    a.clock.advance(20_000);
    expect((await a.call("list_locks"))[0].expires_in_seconds).toBe(10);
  });

  test("defaults to 900 seconds and accepts ttl_minutes", async () => {
    const a = await makeApp();
    const l = await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 10 });
    expect(await a.call("renew_lock", { name: "r", lock_token: l.lock_token })).toEqual({ renewed: true, expires_in_seconds: 900 });
    expect(await a.call("renew_lock", { name: "r", lock_token: l.lock_token, ttl_minutes: 3 })).toEqual({ renewed: true, expires_in_seconds: 180 });
  });

  test("by agent_id when no token is given", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 10 });
    expect(await a.call("renew_lock", { name: "r", agent_id: "a", ttl_seconds: 50 })).toEqual({ renewed: true, expires_in_seconds: 50 });
  });

  test("an absent lock answers renewed:false with store: lock not found", async () => {
    expect(await (await makeApp()).call("renew_lock", { name: "r", lock_token: "abc" })).toEqual({ renewed: false, error: "store: lock not found" });
  });

  test("a wrong token answers renewed:false with store: lock not owned by supplied token, and changes nothing", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 10 });
    expect(await a.call("renew_lock", { name: "r", lock_token: "abc", ttl_seconds: 500 })).toEqual({
      renewed: false,
      error: "store: lock not owned by supplied token",
    });
    expect((await a.call("list_locks"))[0].expires_in_seconds).toBe(10);
  });

  test("with neither lock_token nor agent_id it is the error missing lock_token or agent_id", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a" });
    expect(await a.callError("renew_lock", { name: "r" })).toBe("missing lock_token or agent_id");
    expect(await a.callError("renew_lock", { name: "r", lock_token: null, agent_id: null })).toBe("missing lock_token or agent_id");
  });

  test("ttl_seconds <= 0 is refused and the lock keeps its expiry", async () => {
    const a = await makeApp();
    const l = await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 10 });
    expect(await a.callError("renew_lock", { name: "r", lock_token: l.lock_token, ttl_seconds: 0 })).toBe("store: ttlSeconds must be > 0");
    expect((await a.call("list_locks"))[0].expires_in_seconds).toBe(10);
  });
});

describe("list_locks", () => {
  test("lists live locks by name with name, agent_id and expires_in_seconds", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "zeta", agent_id: "z", ttl_seconds: 100 });
    await a.call("lock_resource", { name: "alpha", agent_id: "x", ttl_seconds: 5 });
    await a.call("lock_resource", { name: "Mid", agent_id: "m", ttl_seconds: 50 });
    const all = await a.call("list_locks");
    expect(all.map((l: any) => l.name)).toEqual(["Mid", "alpha", "zeta"]);
    expect(all[1]).toMatchObject({ name: "alpha", agent_id: "x", expires_in_seconds: 5, queue_depth: 0, waiters: [] });
    a.clock.advance(5_000);
    expect((await a.call("list_locks")).map((l: any) => l.name)).toEqual(["Mid", "zeta"]);
  });

  test("rounds the remaining time up to whole seconds", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 10 });
    a.clock.advance(1_500);
    expect((await a.call("list_locks"))[0].expires_in_seconds).toBe(9);
  });
});

describe("lock_resources", () => {
  test("takes every name at once, deduplicated, with one token per name", async () => {
    const a = await makeApp();
    const r = await a.call("lock_resources", { names: ["b", "a", "b"], agent_id: "x" });
    expect(r.locked).toBe(true);
    expect(Object.keys(r.tokens)).toEqual(["a", "b"]);
    for (const t of Object.values(r.tokens)) expect(t).toMatch(/^[0-9a-f]{32}$/);
    expect(keys(r)).toEqual(["expires_in_seconds", "fences", "locked", "tokens"]);
    expect(r.expires_in_seconds).toBe(900);
    expect((await a.call("list_locks")).map((l: any) => [l.name, l.agent_id])).toEqual([["a", "x"], ["b", "x"]]);
    expect(await a.call("unlock_resource", { name: "a", lock_token: r.tokens.a })).toEqual({ released: true });
  });

  test("all or nothing: if any name is held, none is taken and held_by names the first held in byte order", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "m", agent_id: "holder-m" });
    await a.call("lock_resource", { name: "c", agent_id: "holder-c" });
    const r = await a.call("lock_resources", { names: ["z", "m", "c", "a"], agent_id: "x" });
    expect(r).toEqual({ locked: false, held_by: "holder-c" });
    expect((await a.call("list_locks")).map((l: any) => l.name)).toEqual(["c", "m"]);
  });

  test("sorts by bytes, not by locale", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "a", agent_id: "lower" });
    await a.call("lock_resource", { name: "B", agent_id: "upper" });
    expect(await a.call("lock_resources", { names: ["a", "B"], agent_id: "x" })).toEqual({ locked: false, held_by: "upper" });
  });

  test("ttl_seconds <= 0 is refused and nothing is locked", async () => {
    const a = await makeApp();
    expect(await a.callError("lock_resources", { names: ["a", "b"], agent_id: "x", ttl_seconds: -1 })).toBe("store: ttlSeconds must be > 0");
    expect(await a.call("list_locks")).toEqual([]);
  });

  test("names must be a non-empty array of non-empty strings", async () => {
    const a = await makeApp();
    expect(await a.callError("lock_resources", { agent_id: "x" })).toBe("missing names");
    expect(await a.callError("lock_resources", { names: [], agent_id: "x" })).toBe("missing names");
    expect(await a.callError("lock_resources", { names: "a", agent_id: "x" })).toContain("names must be an array of strings");
    expect(await a.callError("lock_resources", { names: ["a", 1], agent_id: "x" })).toContain("names");
    expect(await a.callError("lock_resources", { names: ["a", ""], agent_id: "x" })).toContain("names");
    expect(await a.call("list_locks")).toEqual([]);
  });
});
