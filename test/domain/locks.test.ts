import { describe, expect, test } from "bun:test";
import type { AcquireRequest, AcquireResult, Grant } from "../../src/domain/locks.ts";
import { makeKernel, useKernel } from "../helpers/kernel.ts";
import { flush, LateClock, tempDbPath, track } from "./support.ts";

const TTL = 60_000;

const t = useKernel();

function acquire(name: string, agentId: string, more: Partial<AcquireRequest> = {}, signal?: AbortSignal) {
  return t.kernel.locks.acquire({ name, agentId, ttlMs: TTL, waitMs: 0, ...more }, signal);
}

async function grant(name: string, agentId: string, more: Partial<AcquireRequest> = {}): Promise<Grant> {
  const r = await acquire(name, agentId, more);
  if (!r.locked) throw new Error(`expected ${agentId} to get ${name}, held by ${r.heldBy}`);
  return r;
}

/** Who holds name right now, as list() reports it. */
const holderOf = async (name: string) => (await t.kernel.locks.list()).find((l) => l.name === name)?.agent_id;

describe("acquire", () => {
  test("grants a free lock with a token, a fence and an expiry of now + ttl", async () => {
    const now = t.clock.now();
    const g = await grant("db", "A", { ttlMs: 30_000 });
    expect(g.token).toMatch(/^[0-9a-f]{32}$/);
    expect(g.fence).toBe(1);
    expect(g.expiresAt).toBe(now + 30_000);
    expect(await holderOf("db")).toBe("A");
  });

  test("reports a held lock as contended with its holder and expiry, and no place in line", async () => {
    const g = await grant("db", "A");
    t.clock.advance(1_000);
    const r = await acquire("db", "B");
    expect(r).toEqual({ locked: false, heldBy: "A", expiresAt: g.expiresAt });
  });

  test("is not re-entrant: the holder asking again is refused", async () => {
    const g = await grant("db", "A");
    const again = await acquire("db", "A");
    expect(again).toEqual({ locked: false, heldBy: "A", expiresAt: g.expiresAt });
  });

  test("refuses a ttl of zero or less with v2's message", async () => {
    for (const ttlMs of [0, -1_000]) {
      await expect(acquire("db", "A", { ttlMs })).rejects.toThrow("store: ttlSeconds must be > 0");
      await expect(t.kernel.locks.acquireMany({ names: ["db"], agentId: "A", ttlMs })).rejects.toThrow("store: ttlSeconds must be > 0");
    }
    expect(await t.kernel.locks.list()).toEqual([]);
    const g = await grant("db", "A");
    await expect(t.kernel.locks.renew("db", g.token, undefined, 0)).rejects.toThrow("store: ttlSeconds must be > 0");
  });

  test("the stored row decides: a row whose holder's expiry has passed is taken with the next fence, a live one is refused", async () => {
    // Rows no timer here knows of (another daemon's, say): only the grant's own condition can tell.
    const now = t.clock.now();
    t.store.db.run("INSERT INTO locks (name, agent_id, token, fence, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)", ["old", "Z", "z".repeat(32), 7, now - 2_000, now]);
    t.store.db.run("INSERT INTO locks (name, agent_id, token, fence, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)", ["live", "Y", "y".repeat(32), 3, now, now + 1]);
    const g = await grant("old", "A");
    expect(g.fence).toBe(8);
    expect(await holderOf("old")).toBe("A");
    expect(await acquire("live", "A")).toEqual({ locked: false, heldBy: "Y", expiresAt: now + 1 });
    expect(await holderOf("live")).toBe("Y");
    const granted = await t.kernel.journal.since(0, { kinds: ["lock.granted"] });
    expect(granted.map((e) => [e.resource, e.agentId, e.data?.fence])).toEqual([["old", "A", 8]]);
  });

  test("gives different locks independent fences and tokens", async () => {
    const a = await grant("a", "A");
    const b = await grant("b", "A");
    expect(a.fence).toBe(1);
    expect(b.fence).toBe(1);
    expect(a.token).not.toBe(b.token);
  });
});

describe("release", () => {
  test("releases by token, after which anyone can take the lock", async () => {
    const g = await grant("db", "A");
    expect(await t.kernel.locks.release("db", g.token, undefined)).toBe(true);
    expect(await holderOf("db")).toBeUndefined();
    expect((await acquire("db", "B")).locked).toBe(true);
  });

  test("a wrong token releases nothing and never falls back to agent_id", async () => {
    await grant("db", "A");
    expect(await t.kernel.locks.release("db", "0".repeat(32), "A")).toBe(false);
    expect(await holderOf("db")).toBe("A");
  });

  test("another lock's token does not release this one", async () => {
    const other = await grant("other", "A");
    await grant("db", "A");
    expect(await t.kernel.locks.release("db", other.token, undefined)).toBe(false);
    expect(await holderOf("db")).toBe("A");
  });

  test("releases by agent_id when no token is given (the v1 path)", async () => {
    await grant("db", "A");
    expect(await t.kernel.locks.release("db", undefined, "B")).toBe(false);
    expect(await holderOf("db")).toBe("A");
    expect(await t.kernel.locks.release("db", undefined, "A")).toBe(true);
    expect(await holderOf("db")).toBeUndefined();
  });

  test("releasing a free lock answers false", async () => {
    expect(await t.kernel.locks.release("nothing", "tok", undefined)).toBe(false);
    expect(await t.kernel.locks.release("nothing", undefined, "A")).toBe(false);
  });

  test("asks for a token or an agent_id", async () => {
    await expect(t.kernel.locks.release("db", undefined, undefined)).rejects.toThrow("missing lock_token or agent_id");
  });
});

describe("renew", () => {
  test("renews by token to now + ttl, keeping the lock past its old expiry", async () => {
    const g = await grant("db", "A", { ttlMs: 10_000 });
    t.clock.advance(8_000);
    const r = await t.kernel.locks.renew("db", g.token, undefined, 10_000);
    expect(r).toEqual({ renewed: true, expiresAt: t.clock.now() + 10_000 });
    t.clock.advance(9_999);
    expect(await holderOf("db")).toBe("A");
    t.clock.advance(1);
    expect(await holderOf("db")).toBeUndefined();
  });

  test("a renewed lock is handed to a blocked waiter at its new expiry", async () => {
    const g = await grant("db", "A", { ttlMs: 10_000 });
    const b = track(acquire("db", "B", { waitMs: 50_000 }));
    t.clock.advance(5_000);
    const r = await t.kernel.locks.renew("db", g.token, undefined, 20_000);
    t.clock.advance(10_000); // the old expiry passes
    await flush();
    expect(b.done).toBe(false);
    t.clock.advance(r.renewed ? r.expiresAt - t.clock.now() : 0);
    await flush();
    expect(b.value?.locked).toBe(true);
  });

  test("renews by agent_id when no token is given", async () => {
    await grant("db", "A", { ttlMs: 10_000 });
    t.clock.advance(5_000);
    expect(await t.kernel.locks.renew("db", undefined, "A", 20_000)).toEqual({ renewed: true, expiresAt: t.clock.now() + 20_000 });
    expect((await t.kernel.locks.renew("db", undefined, "B", 20_000)).renewed).toBe(false);
  });

  test("answers v2's errors for a missing lock and a wrong token", async () => {
    expect(await t.kernel.locks.renew("db", "tok", undefined, TTL)).toEqual({ renewed: false, error: "store: lock not found" });
    const g = await grant("db", "A", { ttlMs: 10_000 });
    expect(await t.kernel.locks.renew("db", "f".repeat(32), "A", TTL)).toEqual({
      renewed: false,
      error: "store: lock not owned by supplied token",
    });
    t.clock.advance(10_000);
    expect(await t.kernel.locks.renew("db", g.token, undefined, TTL)).toEqual({ renewed: false, error: "store: lock not found" });
  });

  test("asks for a token or an agent_id", async () => {
    await expect(t.kernel.locks.renew("db", undefined, undefined, TTL)).rejects.toThrow("missing lock_token or agent_id");
  });
});

describe("fair hand-off", () => {
  test("hands the lock to waiters in the order they blocked", async () => {
    const a = await grant("db", "A");
    const b = track(acquire("db", "B", { waitMs: 30_000 }));
    const c = track(acquire("db", "C", { waitMs: 30_000 }));
    await flush();
    expect(b.done || c.done).toBe(false);

    await t.kernel.locks.release("db", a.token, undefined);
    await flush();
    expect(b.value?.locked).toBe(true);
    expect(c.done).toBe(false);
    expect(await holderOf("db")).toBe("B");

    await t.kernel.locks.release("db", (b.value as Grant).token, undefined);
    await flush();
    expect(c.value?.locked).toBe(true);
    expect(await holderOf("db")).toBe("C");
    expect((c.value as Grant).fence).toBe(3);
  });

  test("a hand-off grants the waiter's own ttl from the moment of hand-off", async () => {
    const a = await grant("db", "A");
    const b = track(acquire("db", "B", { waitMs: 30_000, ttlMs: 5_000 }));
    t.clock.advance(2_000);
    await t.kernel.locks.release("db", a.token, undefined);
    await flush();
    expect((b.value as Grant).expiresAt).toBe(t.clock.now() + 5_000);
  });

  test("a hand-off journals the release, then the grant, at consecutive revisions, each with its own fields", async () => {
    const a = await grant("db", "A");
    const b = track(acquire("db", "B", { waitMs: 30_000, ttlMs: 5_000 }));
    await flush();
    const watcher = track(t.kernel.journal.watch(await t.kernel.journal.revision(), 30_000, { kinds: ["lock.granted"] }, 10));
    await t.kernel.locks.release("db", a.token, undefined);
    await flush();
    const e = (await t.kernel.journal.since(0, { kinds: ["lock."] })).slice(-2);
    expect(e.map((x) => x.kind)).toEqual(["lock.released", "lock.granted"]);
    expect(e[1]!.revision).toBe(e[0]!.revision + 1);
    expect(e[0]).toEqual({ revision: e[0]!.revision, at: t.clock.now(), kind: "lock.released", resource: "db", agentId: "A" });
    expect(e[1]).toEqual({
      revision: e[0]!.revision + 1,
      at: t.clock.now(),
      kind: "lock.granted",
      resource: "db",
      agentId: "B",
      data: { fence: 2, expires_at: t.clock.now() + 5_000, hand_off: true },
    });
    expect((b.value as Grant).fence).toBe(2);
    // A watcher of grants only is woken by the second record, and shown it alone.
    expect(watcher.value?.changes.map((c) => [c.kind, c.revision])).toEqual([["lock.granted", e[1]!.revision]]);
  });

  test("a new caller never barges past an attached waiter", async () => {
    const a = await grant("db", "A");
    const b = track(acquire("db", "B", { waitMs: 30_000 }));
    await t.kernel.locks.release("db", a.token, undefined);
    // D arrives in the same instant, before B's answer has even been delivered.
    const d = await acquire("db", "D");
    expect(d).toMatchObject({ locked: false, heldBy: "B" });
    await flush();
    expect(b.value?.locked).toBe(true);
  });

  test("a new caller arriving at the expiry instant finds the lock already handed to the waiter", async () => {
    const a = await grant("db", "A", { ttlMs: 10_000 });
    const b = track(acquire("db", "B", { waitMs: 30_000 }));
    t.clock.advance(10_000);
    const d = await acquire("db", "D");
    expect(d).toMatchObject({ locked: false, heldBy: "B" });
    await flush();
    expect(b.value?.locked).toBe(true);
    expect(a.expiresAt).toBe(t.clock.now());
  });

  test("a new caller arriving after the expiry but before a late timer ran still finds the waiter holding", async () => {
    const late = await makeKernel({ clock: new LateClock() });
    try {
      const req = (agentId: string, waitMs: number) => ({ name: "db", agentId, ttlMs: TTL, waitMs });
      await late.kernel.locks.acquire({ ...req("A", 0), ttlMs: 10_000 });
      const b = track(late.kernel.locks.acquire(req("B", 30_000)));
      late.clock.advance(10_000);
      expect(await late.kernel.locks.acquire(req("D", 0))).toMatchObject({ locked: false, heldBy: "B" });
      await flush();
      expect(b.value?.locked).toBe(true);
    } finally {
      late.kernel.close();
      late.store.close();
    }
  });

  test("hands the lock on at the exact TTL expiry and not a millisecond before", async () => {
    const a = await grant("db", "A", { ttlMs: 10_000 });
    const b = track(acquire("db", "B", { waitMs: 30_000 }));
    t.clock.advance(a.expiresAt - t.clock.now() - 1);
    await flush();
    expect(b.done).toBe(false);
    expect(await holderOf("db")).toBe("A");
    t.clock.advance(1);
    expect(await holderOf("db")).toBe("B");
    await flush();
    expect(b.value).toMatchObject({ locked: true, expiresAt: a.expiresAt + TTL });
  });

  test("a timed-out waiter is passed over and the waiter behind it gets the lock", async () => {
    const a = await grant("db", "A");
    const b = track(acquire("db", "B", { waitMs: 1_000 }));
    const c = track(acquire("db", "C", { waitMs: 30_000 }));
    t.clock.advance(1_000);
    await flush();
    expect(b.value).toMatchObject({ locked: false, heldBy: "A", wake: { position: 1 } });
    expect(c.done).toBe(false);

    await t.kernel.locks.release("db", a.token, undefined);
    await flush();
    expect(c.value?.locked).toBe(true);
    expect(await holderOf("db")).toBe("C");
  });

  test("a timed-out waiter's answer carries a wake token and its place in line", async () => {
    await grant("db", "A");
    const c = track(acquire("db", "C", { waitMs: 30_000 }));
    const b = acquire("db", "B", { waitMs: 1_000 });
    t.clock.advance(1_000);
    const r = await b;
    if (r.locked) throw new Error("B must not get the lock");
    expect(r.wake?.token).toMatch(/^[0-9a-f]{32}$/);
    expect(r.wake?.position).toBe(2);
    expect(c.done).toBe(false);
    t.kernel.locks.waits.clear();
    await c.promise;
  });

  test("an aborted (disconnected) waiter is never handed the lock", async () => {
    const a = await grant("db", "A");
    const ac = new AbortController();
    const b = track(acquire("db", "B", { waitMs: 30_000 }, ac.signal));
    await flush();
    ac.abort();
    await flush();
    expect(b.value).toMatchObject({ locked: false, heldBy: "A" });

    await t.kernel.locks.release("db", a.token, undefined);
    expect(await holderOf("db")).toBeUndefined();
    expect((await acquire("db", "D")).locked).toBe(true);
  });

  test("a waiter that disconnects in the instant the lock frees is not handed it", async () => {
    const a = await grant("db", "A");
    const ac = new AbortController();
    const b = track(acquire("db", "B", { waitMs: 30_000 }, ac.signal));
    await flush();
    ac.abort();
    await t.kernel.locks.release("db", a.token, undefined);
    await flush();
    expect(b.value?.locked).toBe(false);
    expect(await holderOf("db")).toBeUndefined();
  });

  test("a caller already gone when it would block is never queued as attached", async () => {
    const a = await grant("db", "A");
    const ac = new AbortController();
    ac.abort();
    const b = await acquire("db", "B", { waitMs: 30_000 }, ac.signal);
    expect(b.locked).toBe(false);
    await t.kernel.locks.release("db", a.token, undefined);
    expect(await holderOf("db")).toBeUndefined();
  });

  test("a timed-out waiter calling again with its wake_token keeps its place ahead of later waiters", async () => {
    const a = await grant("db", "A");
    const b1 = acquire("db", "B", { waitMs: 1_000 });
    t.clock.advance(1_000);
    const first = await b1;
    if (first.locked || !first.wake) throw new Error("B should have timed out with a wake token");
    const c = track(acquire("db", "C", { waitMs: 30_000 }));
    await flush();

    // A poll with the token (no wait) reports B's place without losing it.
    const poll = await acquire("db", "B", { wakeToken: first.wake.token });
    expect(poll).toMatchObject({ locked: false, heldBy: "A", wake: { token: first.wake.token, position: 1 } });

    const b2 = track(acquire("db", "B", { waitMs: 30_000, wakeToken: first.wake.token }));
    await flush();
    await t.kernel.locks.release("db", a.token, undefined);
    await flush();
    expect(b2.value?.locked).toBe(true);
    expect(c.done).toBe(false);
    expect(await holderOf("db")).toBe("B");
    await t.kernel.locks.release("db", (b2.value as Grant).token, undefined);
    await flush();
    expect(c.value?.locked).toBe(true);
  });

  test("blocking again with a wake_token cancels the grace that was running", async () => {
    await grant("db", "A", { ttlMs: 10 * 60_000 });
    const b1 = acquire("db", "B", { waitMs: 1_000 });
    t.clock.advance(1_000);
    const first = (await b1) as Extract<AcquireResult, { locked: false }>;
    t.clock.advance(120_000 - 1); // one millisecond of grace left
    const b2 = track(acquire("db", "B", { waitMs: 50_000, wakeToken: first.wake!.token }));
    t.clock.advance(10_000);
    await flush();
    expect(b2.done).toBe(false);
    expect((await t.kernel.locks.list())[0]!.waiters).toEqual([{ agentId: "B", attached: true, waitingSeconds: 130 }]);
    t.kernel.locks.waits.clear();
    await b2.promise;
  });

  test("a waiter that keeps polling with its wake_token and no wait keeps its place", async () => {
    await grant("db", "A", { ttlMs: 60 * 60_000 });
    const b1 = acquire("db", "B", { waitMs: 1_000 });
    t.clock.advance(1_000);
    const first = (await b1) as Extract<AcquireResult, { locked: false }>;
    const c = acquire("db", "C", { waitMs: 1_000 });
    t.clock.advance(1_000);
    await c;
    // B polls once a minute, well inside each grace period, for five minutes.
    for (let i = 0; i < 5; i++) {
      t.clock.advance(60_000);
      const poll = await acquire("db", "B", { wakeToken: first.wake!.token });
      expect(poll).toMatchObject({ locked: false, wake: { token: first.wake!.token, position: 1 } });
    }
  });

  test("a free lock goes to a new caller even when detached waiters hold places", async () => {
    const a = await grant("db", "A");
    const b = acquire("db", "B", { waitMs: 1_000 });
    t.clock.advance(1_000);
    await b;
    await t.kernel.locks.release("db", a.token, undefined);
    expect((await acquire("db", "D")).locked).toBe(true);
    expect((await t.kernel.locks.list())[0]!.waiters.map((w) => w.agentId)).toEqual(["B"]);
  });

  test("a wake_token past its grace period no longer holds a place", async () => {
    await grant("db", "A", { ttlMs: 10 * 60_000 });
    const b1 = acquire("db", "B", { waitMs: 1_000 });
    t.clock.advance(1_000);
    const first = (await b1) as Extract<AcquireResult, { locked: false }>;
    const c = track(acquire("db", "C", { waitMs: 50_000 }));
    t.clock.advance(120_000); // LOCK_WAKE_GRACE_MS, while C blocks (C times out along the way)
    await flush();
    const again = await acquire("db", "B", { wakeToken: first.wake!.token, waitMs: 0 });
    expect(again).toMatchObject({ locked: false, heldBy: "A" });
    expect("wake" in again).toBe(false);
    expect(c.done).toBe(true);
  });

  test("a waiter whose wait ends in the instant the lock expires takes the lock", async () => {
    const a = await grant("db", "A", { ttlMs: 10_000 });
    const b = track(acquire("db", "B", { waitMs: 10_000 }));
    t.clock.advance(10_000);
    await flush();
    expect(b.value).toMatchObject({ locked: true });
    expect(await holderOf("db")).toBe("B");
    expect(a.expiresAt).toBe(t.clock.now());
  });

  test("a timed-out waiter holding a wake token takes a lock that is free when it calls again", async () => {
    const a = await grant("db", "A");
    const b1 = acquire("db", "B", { waitMs: 1_000 });
    t.clock.advance(1_000);
    const first = (await b1) as Extract<AcquireResult, { locked: false }>;
    await t.kernel.locks.release("db", a.token, undefined);
    const again = await acquire("db", "B", { wakeToken: first.wake!.token });
    expect(again.locked).toBe(true);
    expect(t.kernel.locks.waits.size).toBe(0);
  });
});

describe("fencing", () => {
  test("fences strictly increase per resource over releases, expiries and hand-offs", async () => {
    const fences: number[] = [];
    const a = await grant("db", "A", { ttlMs: 1_000 });
    fences.push(a.fence);
    t.clock.advance(1_000);
    const b = await grant("db", "B");
    fences.push(b.fence);
    const c = track(acquire("db", "C", { waitMs: 10_000 }));
    await t.kernel.locks.release("db", b.token, undefined);
    await flush();
    fences.push((c.value as Grant).fence);
    expect(fences).toEqual([1, 2, 3]);
  });

  test("fences keep increasing across a reopened store", async () => {
    const db = tempDbPath();
    try {
      const first = await makeKernel({ path: db.path });
      const g1 = (await first.kernel.locks.acquire({ name: "db", agentId: "A", ttlMs: TTL, waitMs: 0 })) as Grant;
      await first.kernel.locks.release("db", g1.token, undefined);
      const g2 = (await first.kernel.locks.acquire({ name: "db", agentId: "A", ttlMs: TTL, waitMs: 0 })) as Grant;
      await first.kernel.locks.release("db", g2.token, undefined);
      first.kernel.close();
      first.store.close();

      const second = await makeKernel({ path: db.path });
      const g3 = (await second.kernel.locks.acquire({ name: "db", agentId: "B", ttlMs: TTL, waitMs: 0 })) as Grant;
      second.kernel.close();
      second.store.close();
      expect([g1.fence, g2.fence, g3.fence]).toEqual([1, 2, 3]);
    } finally {
      db.cleanup();
    }
  });
});

describe("acquireMany", () => {
  test("takes every name at once over the deduplicated names", async () => {
    const now = t.clock.now();
    const r = await t.kernel.locks.acquireMany({ names: ["b", "a", "b"], agentId: "A", ttlMs: TTL });
    expect(r.locked).toBe(true);
    expect(Object.keys(r.tokens!).sort()).toEqual(["a", "b"]);
    expect(r.expiresAt).toBe(now + TTL);
    expect((await t.kernel.locks.list()).map((l) => [l.name, l.agent_id])).toEqual([
      ["a", "A"],
      ["b", "A"],
    ]);
    expect(await t.kernel.locks.release("a", r.tokens!.a, undefined)).toBe(true);
  });

  test("takes nothing when any name is held, naming the holder of the first held name in byte order", async () => {
    await grant("z", "Z");
    await grant("m", "M");
    const r = await t.kernel.locks.acquireMany({ names: ["z", "a", "m"], agentId: "A", ttlMs: TTL });
    expect(r).toEqual({ locked: false, heldBy: "M" });
    expect(await holderOf("a")).toBeUndefined();
  });

  test("sorts by UTF-8 bytes, not UTF-16 code units", async () => {
    // U+FFFF sorts before U+1F600 in UTF-8 bytes but after it in UTF-16 units.
    await grant("\u{FFFF}", "BMP");
    await grant("\u{1F600}", "ASTRAL");
    expect(await t.kernel.locks.acquireMany({ names: ["\u{1F600}", "\u{FFFF}"], agentId: "A", ttlMs: TTL })).toEqual({ locked: false, heldBy: "BMP" });
  });

  test("gives each name its own fence", async () => {
    const a = await grant("a", "A");
    await t.kernel.locks.release("a", a.token, undefined);
    const r = await t.kernel.locks.acquireMany({ names: ["a", "b"], agentId: "B", ttlMs: TTL });
    expect(r.fences).toEqual({ a: 2, b: 1 });
  });
});

describe("list", () => {
  test("lists live locks by name with their waiters in order and whether each is blocked", async () => {
    await grant("b-lock", "A");
    await grant("a-lock", "A", { ttlMs: 1_000 });
    const x = acquire("b-lock", "X", { waitMs: 2_000 });
    t.clock.advance(1_000); // a-lock expires
    const y = track(acquire("b-lock", "Y", { waitMs: 30_000 }));
    t.clock.advance(1_000); // X times out
    await x;
    await flush();
    const list = await t.kernel.locks.list();
    expect(list.map((l) => l.name)).toEqual(["b-lock"]);
    expect(list[0]!.waiters).toEqual([
      { agentId: "X", attached: false, waitingSeconds: 2 },
      { agentId: "Y", attached: true, waitingSeconds: 1 },
    ]);
    t.kernel.locks.waits.clear();
    await y.promise;
  });
});

describe("expiry and failed calls", () => {
  test("a call that fails does not undo an expiry that fell due before it", async () => {
    // Timers that never fire: the expiry is processed by the next call, which then fails.
    const late = await makeKernel({ clock: new LateClock() });
    try {
      const a = (await late.kernel.locks.acquire({ name: "db", agentId: "A", ttlMs: 1_000, waitMs: 0 })) as Grant;
      const b = track(late.kernel.locks.acquire({ name: "db", agentId: "B", ttlMs: TTL, waitMs: 30_000 }));
      await late.kernel.counters.increment("c", Number.MAX_SAFE_INTEGER);
      late.clock.advance(1_000);
      await expect(late.kernel.counters.increment("c", 1)).rejects.toThrow();
      await flush();
      expect(b.value?.locked).toBe(true);
      expect((await late.kernel.locks.list()).map((l) => l.agent_id)).toEqual(["B"]);
      expect(a.expiresAt).toBe(late.clock.now());
    } finally {
      late.kernel.close();
      late.store.close();
    }
  });
});

describe("Locks when a hand-off's transaction fails", () => {
  test("answers the waiter as not granted instead of leaving its call hanging", async () => {
    const { kernel, store, clock } = await makeKernel();
    const a = await kernel.locks.acquire({ name: "r", agentId: "a", ttlMs: 60_000, waitMs: 0 });
    if (!a.locked) throw new Error("setup");
    let answered: unknown;
    void kernel.locks.acquire({ name: "r", agentId: "b", ttlMs: 60_000, waitMs: 10_000 }).then((r) => (answered = r));
    await Promise.resolve();
    // The release hands the lock to b inside the transaction; then the transaction fails.
    expect(() =>
      store.tx(() => {
        kernel.locks.release("r", a.token, undefined);
        throw new Error("disk I/O error");
      }),
    ).toThrow("disk I/O error");
    for (let i = 0; i < 10; i++) await Promise.resolve();
    await Bun.sleep(0);
    expect(answered).toMatchObject({ locked: false, heldBy: "a" });
    expect((await kernel.locks.list()).map((l) => l.agent_id)).toEqual(["a"]);
    clock.advance(0);
    kernel.close();
    store.close();
  });
});
