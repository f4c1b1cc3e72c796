// Airlock v2's invariants, checked over real concurrent HTTP against a real daemon process:
// mutual exclusion, atomic counters, compare-and-set, exactly-once claims, and FIFO waits.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { useDaemon } from "../helpers/daemon.ts";
import { track, until } from "../helpers/until.ts";

// Bun's default is 5 s; a blocked waiter below may legitimately take longer when a test fails.
setDefaultTimeout(20_000);

const d = useDaemon();

interface LockEntry {
  name: string;
  agent_id: string;
  queue_depth: number;
  waiters: { agent_id: string; blocked: boolean }[];
}

async function lockEntry(name: string): Promise<LockEntry | undefined> {
  const locks = (await d.call("list_locks")) as LockEntry[];
  return locks.find((l) => l.name === name);
}

/** Resolves once `agent` is blocked (attached) in the line of lock `name`. */
async function blockedIn(name: string, agent: string): Promise<void> {
  await until(`${agent} blocked on ${name}`, async () => (await lockEntry(name))?.waiters.some((w) => w.agent_id === agent && w.blocked));
}

describe("concurrency over real HTTP", () => {
  test("of 25 concurrent lock_resource callers on one name exactly one gets the lock", async () => {
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) => d.call("lock_resource", { name: "race-lock", agent_id: `racer-${i}` })),
    );
    const winners = answers.filter((a) => a.locked === true);
    expect(winners).toHaveLength(1);
    const winner = answers.findIndex((a) => a.locked === true);
    for (const a of answers.filter((x) => x.locked === false)) expect(a.held_by).toBe(`racer-${winner}`);
    expect((await lockEntry("race-lock"))?.agent_id).toBe(`racer-${winner}`);
  });

  test("100 concurrent increment_counter calls get the 100 distinct values 1..100", async () => {
    const answers = await Promise.all(Array.from({ length: 100 }, () => d.call("increment_counter", { name: "race-counter" })));
    const values = answers.map((a) => a.value as number).sort((a, b) => a - b);
    expect(values).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  test("of 50 concurrent set_note_if from the same expected value exactly one swaps", async () => {
    expect(await d.call("set_note", { key: "race-note", value: "v0" })).toEqual({ saved: true });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => d.call("set_note_if", { key: "race-note", expected_value: "v0", new_value: `v-${i}` })),
    );
    const swapped = answers.flatMap((a, i) => (a.swapped === true ? [i] : []));
    expect(swapped).toHaveLength(1);
    expect(answers.every((a) => typeof a.swapped === "boolean")).toBe(true);
    expect((await d.call("get_note", { key: "race-note" })).value).toBe(`v-${swapped[0]}`);
  });

  test("20 concurrent claim_next_task over 10 tasks claim 10 distinct tasks and answer claimed:false 10 times", async () => {
    const pushed = new Set<number>();
    for (let i = 0; i < 10; i++) pushed.add((await d.call("push_task", { queue: "race-q", payload: `job ${i}` })).id);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => d.call("claim_next_task", { queue: "race-q", agent_id: `worker-${i}` })),
    );
    const claimed = answers.filter((a) => a.claimed === true);
    expect(claimed).toHaveLength(10);
    expect(answers.filter((a) => a.claimed === false)).toHaveLength(10);
    expect(new Set(claimed.map((a) => a.id))).toEqual(pushed);
    expect(new Set(claimed.map((a) => a.lease_token)).size).toBe(10);
    const tasks = (await d.call("list_tasks", { queue: "race-q" })) as { state: string }[];
    expect(tasks.map((t) => t.state)).toEqual(Array(10).fill("claimed"));
  });
});

describe("FIFO waits", () => {
  test("blocked waiters are served in arrival order: A holds, B then C block; A's unlock goes to B, B's to C", async () => {
    const name = "fifo-lock";
    const a = await d.call("lock_resource", { name, agent_id: "A" });
    expect(a.locked).toBe(true);
    const b = track(d.call("lock_resource", { name, agent_id: "B", wait_seconds: 10 }));
    await blockedIn(name, "B");
    const c = track(d.call("lock_resource", { name, agent_id: "C", wait_seconds: 10 }));
    await blockedIn(name, "C");

    expect(await d.call("unlock_resource", { name, lock_token: a.lock_token })).toEqual({ released: true });
    const bGot = await b.promise;
    expect(bGot.locked).toBe(true);
    expect(c.settled()).toBe(false);
    const held = await lockEntry(name);
    expect(held?.agent_id).toBe("B");
    expect(held?.waiters).toEqual([expect.objectContaining({ agent_id: "C", blocked: true })]);

    expect(await d.call("unlock_resource", { name, lock_token: bGot.lock_token })).toEqual({ released: true });
    const cGot = await c.promise;
    expect(cGot.locked).toBe(true);
    expect((await lockEntry(name))?.agent_id).toBe("C");
    await d.call("unlock_resource", { name, lock_token: cGot.lock_token });
  });

  test("a timed-out waiter that calls again with its wake_token keeps its place ahead of a later waiter", async () => {
    const name = "wake-lock";
    const holder = await d.call("lock_resource", { name, agent_id: "H" });
    expect(holder.locked).toBe(true);

    const timedOut = await d.call("lock_resource", { name, agent_id: "T", wait_seconds: 1 });
    expect(timedOut).toMatchObject({ locked: false, held_by: "H", queue_position: 1 });
    expect(timedOut.wake_token).toEqual(expect.any(String));
    expect(timedOut.retry_with).toContain(`wake_token=${timedOut.wake_token}`);

    const later = track(d.call("lock_resource", { name, agent_id: "L", wait_seconds: 10 }));
    await blockedIn(name, "L");
    const again = track(d.call("lock_resource", { name, agent_id: "T", wait_seconds: 10, wake_token: timedOut.wake_token }));
    await blockedIn(name, "T");
    const line = (await lockEntry(name))?.waiters.map((w) => w.agent_id);
    expect(line).toEqual(["T", "L"]);

    await d.call("unlock_resource", { name, lock_token: holder.lock_token });
    const tGot = await again.promise;
    expect(tGot.locked).toBe(true);
    expect(later.settled()).toBe(false);
    expect((await lockEntry(name))?.agent_id).toBe("T");

    await d.call("unlock_resource", { name, lock_token: tGot.lock_token });
    const lGot = await later.promise;
    expect(lGot.locked).toBe(true);
    await d.call("unlock_resource", { name, lock_token: lGot.lock_token });
  });
});
