// Pools end to end, against a real daemon process over real HTTP (source or compiled binary):
// the three-agent story with a real offer window, weights, a blocked call granted on release,
// compare-and-set under 50 concurrent writers, a restart in the middle of a queue, a slot bound
// to a real process group, and lock_resources waiting all-or-nothing.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawn } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { useDaemon, useDaemonStarter } from "../helpers/daemon.ts";
import { track, until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

const d = useDaemon();
const start = useDaemonStarter();

async function configure(pool: string, capacity: number, offerSeconds?: number) {
  const cur = (await d.call("list_pools")).find((p: any) => p.pool === pool);
  const r = await d.call("configure_pool", {
    pool,
    capacity,
    expected_version: cur?.version ?? 0,
    author: "e2e",
    reason: "test set-up",
    ...(offerSeconds ? { offer_seconds: offerSeconds } : {}),
  });
  expect(r.configured).toBe(true);
}
const poolOf = async (name: string) => (await d.call("list_pools")).find((p: any) => p.pool === name);

describe("the three-agent story", () => {
  test("A granted; B and C queued keep working; B claims its offer; C misses its window, is paused, rejoins and claims", async () => {
    await configure("story", 1, 1);
    const a = await d.call("acquire_slot", { agent_id: "A", pool: "story", reason: "cargo test" });
    expect(a).toMatchObject({ granted: true, pool: "story", weight: 1 });
    const b = await d.call("acquire_slot", { agent_id: "B", pool: "story", reason: "npm test" });
    const c = await d.call("acquire_slot", { agent_id: "C", pool: "story", reason: "build docs" });
    expect(b).toMatchObject({ granted: false, capacity: 1, in_use: 1, queue_position: 1 });
    expect(c).toMatchObject({ granted: false, queue_position: 2, ahead: [{ agent_id: "B", reason: "npm test", weight: 1 }] });
    expect(c.holders).toEqual([{ agent_id: "A", reason: "cargo test", weight: 1, held_seconds: 0 }]);
    expect(c.retry_with).toContain(c.wake_token);

    expect(await d.call("release_slot", { slot_token: a.slot_token })).toEqual({ released: true });
    expect((await poolOf("story")).waiters.map((w: any) => w.state)).toEqual(["offered", "queued"]);
    const bGot = await d.call("acquire_slot", { agent_id: "B", pool: "story", wake_token: b.wake_token });
    expect(bGot.granted).toBe(true);
    await d.call("release_slot", { slot_token: bGot.slot_token });
    expect((await poolOf("story")).waiters).toMatchObject([{ agent_id: "C", state: "offered" }]);
    // C is busy elsewhere for longer than the 1 s window.
    await until("C's offer to lapse", async () => (await poolOf("story")).waiters[0]?.state === "paused", 10_000, 50);
    const back = await d.call("acquire_slot", { agent_id: "C", pool: "story", wake_token: c.wake_token });
    expect(back).toMatchObject({ granted: true, pool: "story" });
    const p = await poolOf("story");
    expect(p).toMatchObject({ in_use: 1, offered: 0, queued: 0 });
  });
});

describe("fairness and weights", () => {
  test("a blocked acquire is granted the moment the holder releases", async () => {
    await configure("blocking", 1);
    const a = await d.call("acquire_slot", { agent_id: "A", pool: "blocking" });
    const b = track(d.call("acquire_slot", { agent_id: "B", pool: "blocking", wait_seconds: 20 }));
    await until("B to block", async () => (await poolOf("blocking")).waiters[0]?.blocked === true);
    const released = performance.now();
    await d.call("release_slot", { slot_token: a.slot_token });
    const r = await b.promise;
    expect(r.granted).toBe(true);
    // Within seconds (a loaded machine), far inside B's 20 s wait: the release granted it.
    expect(b.at() - released).toBeLessThan(5000);
  });

  test("a heavier request at the head is not overtaken by a lighter one", async () => {
    await configure("weights", 4);
    const big = await d.call("acquire_slot", { agent_id: "X", pool: "weights", weight: 3 });
    const heavy = await d.call("acquire_slot", { agent_id: "H", pool: "weights", weight: 2 });
    const light = await d.call("acquire_slot", { agent_id: "L", pool: "weights", weight: 1 });
    expect([heavy.granted, light.granted]).toEqual([false, false]);
    expect(light.queue_position).toBe(2);
    expect(await d.call("acquire_slot", { agent_id: "L", pool: "weights", weight: 5 })).toEqual({
      error: "weight must be <= the pool's capacity (4) (got 5)",
    });
    await d.call("release_slot", { slot_token: big.slot_token });
    expect((await poolOf("weights")).waiters.map((w: any) => `${w.agent_id}:${w.state}`)).toEqual(["H:offered", "L:offered"]);
  });

  test("50 concurrent configure_pool calls with one expected_version: exactly one wins", async () => {
    await configure("cas", 1);
    const version = (await poolOf("cas")).version;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        d.call("configure_pool", { pool: "cas", capacity: i + 1, expected_version: version, author: `w${i}`, reason: "race" }),
      ),
    );
    const won = results.filter((r) => r.configured);
    expect(won).toHaveLength(1);
    expect(won[0].version).toBe(version + 1);
    for (const r of results.filter((x) => !x.configured)) expect(r).toMatchObject({ version: version + 1 });
    const p = await poolOf("cas");
    expect(p.version).toBe(version + 1);
    expect(p.capacity).toBe(results.indexOf(won[0]) + 1);
  });

  test("bad arguments name the field and change nothing", async () => {
    const before = await d.call("list_pools");
    expect(await d.call("acquire_slot", { agent_id: "A", weight: 0 })).toEqual({ error: "weight must be >= 1 (got 0)" });
    expect(await d.call("acquire_slot", { agent_id: "A", pool: "nope" })).toEqual({ error: "unknown pool: nope" });
    expect(await d.call("acquire_slot", { agent_id: "A", pid: 1 })).toMatchObject({ error: expect.stringContaining("pid must not be 1") });
    expect(await d.call("acquire_slot", { agent_id: "A", pid: d.proc.pid })).toMatchObject({ error: expect.stringContaining("daemon's own") });
    expect(await d.call("configure_pool", { pool: "heavy", capacity: 0, expected_version: 1, author: "a", reason: "r" })).toEqual({
      error: "capacity must be >= 1 (got 0)",
    });
    expect(await d.call("configure_pool", { pool: "heavy", capacity: 2, expected_version: 1, author: "a" })).toEqual({ error: "missing reason" });
    expect(await d.call("list_pools")).toEqual(before);
  });
});

describe("process-bound slots", () => {
  test("a slot bound to a process group is held while the group lives and released soon after its last exit", async () => {
    await configure("bound", 1);
    const stamp = join(d.home, "last-exit");
    // The background job writes the time just before it exits: the group's last moment.
    const child = spawn(["sh", "-c", `(sleep 1.2; date +%s%N > ${stamp}) & sleep 0.3; exit 0`], { detached: true, stdout: "ignore", stderr: "ignore" });
    const g = await d.call("acquire_slot", { agent_id: "job", pool: "bound", pid: child.pid });
    expect(g).toMatchObject({ granted: true, bound_pid: child.pid });
    expect(g.expires_in_seconds).toBeUndefined();
    await child.exited; // the shell is gone; its background job keeps the group alive
    expect((await poolOf("bound")).in_use).toBe(1);
    await until("the slot to be released", async () => (await poolOf("bound")).in_use === 0, 10_000, 10);
    const releasedAt = Date.now();
    const exitedAt = Number(readFileSync(stamp, "utf8").trim()) / 1e6;
    const lag = releasedAt - exitedAt;
    console.log(`process-bound slot released ${lag.toFixed(0)} ms after its group's last process exited`);
    // Not before the exit, and within seconds (the daemon checks every 250 ms; a loaded machine
    // runs late): the exit released it, not a lease.
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThan(5000);
  });
});

describe("restart", () => {
  test("a restart in the middle of a queue keeps holders, the order and the wake tokens", async () => {
    const first = await start();
    const call = (t: string, a: Record<string, unknown>) => first.call(t, a);
    const a = await call("acquire_slot", { agent_id: "A", reason: "build" });
    const waiting: string[] = [];
    for (const n of ["B", "C", "D"]) waiting.push((await call("acquire_slot", { agent_id: n })).wake_token);
    await first.kill(9);

    const again = await start({ home: first.home, db: first.db });
    const p = (await again.call("list_pools"))[0];
    expect(p.holders).toMatchObject([{ agent_id: "A", reason: "build" }]);
    expect(p.waiters.map((w: any) => w.agent_id)).toEqual(["B", "C", "D"]);
    const c = await again.call("acquire_slot", { agent_id: "C", wake_token: waiting[1] });
    expect(c).toMatchObject({ granted: false, queue_position: 2, wake_token: waiting[1] });
    await again.call("release_slot", { slot_token: a.slot_token });
    const b = await again.call("acquire_slot", { agent_id: "B", wake_token: waiting[0] });
    expect(b.granted).toBe(true);
  });
});

describe("lock_resources with wait_seconds", () => {
  test("blocks until every name is free, takes them together, and no newcomer barges past it", async () => {
    const x = await d.call("lock_resource", { name: "g-a", agent_id: "X" });
    const y = await d.call("lock_resource", { name: "g-b", agent_id: "Y" });
    const g = track(d.call("lock_resources", { names: ["g-a", "g-b"], agent_id: "G", wait_seconds: 20 }));
    await until("G to queue", async () => (await d.call("list_locks")).find((l: any) => l.name === "g-a")?.queue_depth === 1);
    await d.call("unlock_resource", { name: "g-a", lock_token: x.lock_token });
    expect(await d.call("lock_resource", { name: "g-a", agent_id: "N" })).toMatchObject({ locked: false, held_by: "G" });
    expect(g.settled()).toBe(false);
    await d.call("unlock_resource", { name: "g-b", lock_token: y.lock_token });
    const r = await g.promise;
    expect(r).toMatchObject({ locked: true });
    expect(Object.keys(r.tokens).sort()).toEqual(["g-a", "g-b"]);
  });
});
