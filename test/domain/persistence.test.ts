import { describe, expect, test } from "bun:test";
import type { Grant } from "../../src/domain/locks.ts";
import type { ClaimResult } from "../../src/domain/tasks.ts";
import type { TestKernel } from "../helpers/kernel.ts";
import { useRestarts } from "./support.ts";

const START = 1_700_000_000_000;
const { openAt, shut } = useRestarts();

type Claimed = Extract<ClaimResult, { claimed: true }>;

/** Writes one of everything; returns what a later kernel needs to check it. */
async function populate(k: TestKernel) {
  const { kernel } = k;
  await kernel.notes.set("plain", "kept", "alice", undefined);
  await kernel.notes.set("brief", "short-lived", undefined, 30_000);
  await kernel.counters.increment("builds", 5);
  const lock = (await kernel.locks.acquire({ name: "db", agentId: "A", ttlMs: 10 * 60_000, waitMs: 0 })) as Grant;
  const short = (await kernel.locks.acquire({ name: "short", agentId: "A", ttlMs: 30_000, waitMs: 0 })) as Grant;
  await kernel.presence.register("B", 30_000);
  const bLock = (await kernel.locks.acquire({ name: "b-lock", agentId: "B", ttlMs: 10 * 60_000, waitMs: 0 })) as Grant;
  const pending = await kernel.tasks.push({ queue: "q", payload: "later", priority: 1 });
  const leased = await kernel.tasks.push({ queue: "q", payload: "leased", priority: 9 });
  const claim = (await kernel.tasks.claim("q", "A", 60_000, 0)) as Claimed;
  const bTask = await kernel.tasks.push({ queue: "q", payload: "b-task", priority: 5 });
  const bClaim = (await kernel.tasks.claim("q", "B", 10 * 60_000, 0)) as Claimed;
  await kernel.events.signal("e");
  await kernel.events.signal("e");
  await kernel.events.signal("e");
  expect([claim.id, bClaim.id]).toEqual([leased, bTask]);
  return { lock, short, bLock, pending, leased, claim, bTask, bClaim };
}

describe("a reopened kernel", () => {
  test("keeps notes, counters, locks, tasks and event generations", async () => {
    const first = await openAt(START);
    const before = await populate(first);
    await shut(first);

    const k = await openAt(START + 1_000);
    const { kernel } = k;
    expect((await kernel.notes.list()).map((n) => [n.key, n.value, n.author])).toEqual([
      ["brief", "short-lived", null],
      ["plain", "kept", "alice"],
    ]);
    expect(await kernel.counters.increment("builds", 1)).toBe(6);
    expect((await kernel.locks.list()).map((l) => [l.name, l.agent_id, l.fence])).toEqual([
      ["b-lock", "B", 1],
      ["db", "A", 1],
      ["short", "A", 1],
    ]);
    expect((await kernel.presence.list()).map((a) => a.agent_id)).toEqual(["B"]);
    expect((await kernel.tasks.list("q")).map((x) => [x.id, x.state])).toEqual([
      [before.pending, "pending"],
      [before.leased, "claimed"],
      [before.bTask, "claimed"],
    ]);
    expect(await kernel.events.wait("e", 3, 0)).toEqual({ generation: 3, fired: false });
    expect(await kernel.events.signal("e")).toBe(4);

    // The same capabilities still work.
    expect(await kernel.locks.release("db", before.lock.token, undefined)).toBe(true);
    expect(await kernel.tasks.complete(before.leased, before.claim.leaseToken)).toBe(true);
    const again = (await kernel.locks.acquire({ name: "db", agentId: "C", ttlMs: 60_000, waitMs: 0 })) as Grant;
    expect(again.fence).toBe(2);
  });

  test("processes expiries that fell due while it was down, before any call", async () => {
    const first = await openAt(START);
    const before = await populate(first);
    await shut(first);

    // Down for two minutes: the brief note, the short lock, A's 60 s lease and B's 30 s
    // heartbeat have all lapsed.
    const k = await openAt(START + 120_000);
    const rows = (sql: string) => k.store.db.query(sql).all();
    // Processed on open, not merely hidden from reads.
    expect(rows("SELECT key FROM notes ORDER BY key")).toEqual([{ key: "plain" }]);
    expect(rows("SELECT name, agent_id FROM locks WHERE agent_id IS NOT NULL ORDER BY name")).toEqual([{ name: "db", agent_id: "A" }]);
    expect(rows("SELECT agent_id FROM agents")).toEqual([]);
    expect(rows("SELECT id, state FROM tasks ORDER BY id")).toEqual([
      { id: before.pending, state: "pending" },
      { id: before.leased, state: "pending" },
      { id: before.bTask, state: "pending" },
    ]);
    expect(await k.kernel.tasks.complete(before.leased, before.claim.leaseToken)).toBe(false);
    expect(await k.kernel.locks.release("b-lock", before.bLock.token, undefined)).toBe(false);
  });

  test("re-arms pending expiries so they still fire at their exact deadline", async () => {
    const first = await openAt(START);
    const before = await populate(first);
    await shut(first);

    const k = await openAt(START + 60_000);
    const holders = async () => (await k.kernel.locks.list()).map((l) => l.name);
    expect(await holders()).toEqual(["db"]);
    k.clock.advance(before.lock.expiresAt - k.clock.now() - 1);
    expect(await holders()).toEqual(["db"]);
    const held = () => k.store.db.query("SELECT COUNT(*) AS n FROM locks WHERE agent_id IS NOT NULL").get();
    expect(held()).toEqual({ n: 1 });
    k.clock.advance(1);
    expect(held()).toEqual({ n: 0 });
  });

  test("re-arms leases and heartbeats that are still running", async () => {
    const first = await openAt(START);
    const before = await populate(first);
    await shut(first);

    const k = await openAt(START + 10_000);
    const state = (id: number) => k.store.db.query("SELECT state FROM tasks WHERE id = ?").get(id);
    k.clock.advance(before.claim.leaseExpiresAt - k.clock.now() - 1);
    expect(state(before.leased)).toEqual({ state: "claimed" });
    k.clock.advance(1);
    expect(state(before.leased)).toEqual({ state: "pending" });
    // B's heartbeat (30 s) ended earlier, at START + 30 000, releasing its lock and its claim.
    expect(state(before.bTask)).toEqual({ state: "pending" });
    expect(k.store.db.query("SELECT name FROM locks WHERE agent_id = 'B'").all()).toEqual([]);
  });
});
