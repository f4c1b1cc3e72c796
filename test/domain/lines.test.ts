// The lines' stored form on SQLite (src/domain/lines.ts): a restart (a new kernel on the same
// file) brings every place whose call can outlive it back in order, detached, with its grace
// where it stood; a call blocked at the stop gets a fresh grace; grace-0 lines are not stored.
import { expect, test } from "bun:test";
import { LOCK_WAKE_GRACE_MS } from "../../src/domain/locks.ts";
import { settle, type TestKernel } from "../helpers/kernel.ts";
import { useRestarts } from "./support.ts";

const START = 1_700_000_000_000;
const { openAt, shut } = useRestarts();

const waitersOf = async (k: TestKernel, name: string) => (await k.kernel.locks.list()).find((l) => l.name === name)?.waiters.map((w) => [w.agentId, w.attached]);

test("a restart keeps lock places in order, detached: a timed-out one lapses at its stored grace, a blocked one gets a fresh grace", async () => {
  const first = await openAt(START);
  expect(await first.kernel.locks.acquire({ name: "L", agentId: "A", ttlMs: 3600_000, waitMs: 0 })).toMatchObject({ locked: true });
  // B's call times out (detached: its grace runs from then); C's call is blocked at the stop.
  const b = first.kernel.locks.acquire({ name: "L", agentId: "B", ttlMs: 60_000, waitMs: 1_000 });
  const c = first.kernel.locks.acquire({ name: "L", agentId: "C", ttlMs: 60_000, waitMs: 30_000 });
  first.clock.advance(1_000);
  const bDenied = await b;
  expect(bDenied).toMatchObject({ locked: false, wake: { position: 1 } });
  // An event waiter's place (grace 0) is not stored.
  void first.kernel.events.wait("e", 0, 30_000);
  await settle();
  expect(first.store.db.query("SELECT queue FROM waiters ORDER BY ord").all()).toEqual([{ queue: "lock" }, { queue: "lock" }]);
  await shut(first);
  expect((await c).locked).toBe(false);

  // Back 60 s later: both places, in order, detached.
  const again = await openAt(START + 1_000 + 60_000);
  expect(await waitersOf(again, "L")).toEqual([
    ["B", false],
    ["C", false],
  ]);
  // B's grace ends 120 s after its call returned; C's 120 s after the restart.
  again.clock.advance(LOCK_WAKE_GRACE_MS - 60_000);
  expect(await waitersOf(again, "L")).toEqual([["C", false]]);
  // B's wake_token no longer finds a place (and a poll takes none).
  const token = "wake" in bDenied ? bDenied.wake!.token : "";
  expect(await again.kernel.locks.acquire({ name: "L", agentId: "B", ttlMs: 60_000, waitMs: 0, wakeToken: token })).toMatchObject({ locked: false });
  expect(await waitersOf(again, "L")).toEqual([["C", false]]);
  again.clock.advance(60_000);
  expect(await waitersOf(again, "L")).toEqual([]);
});
