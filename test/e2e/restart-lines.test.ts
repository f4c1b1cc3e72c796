// A restart keeps the waiter lines, on both stores (AIRLOCK_TEST_STORE=postgres for the
// shared one): capacity 1, A holds, B and C queued (absent, with their wake_tokens); after a
// graceful stop (SIGTERM) or a kill -9 and a start on the same store, every queued request is
// there, in order, with the holder, and B then C get the slot as A's release frees it. On
// PostgreSQL a graceful stop deletes the daemon's row: its waiters stay in line, detached.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { useDaemonStarter } from "../helpers/daemon.ts";

setDefaultTimeout(60_000);

const start = useDaemonStarter();

for (const [how, signal] of [
  ["a graceful restart (SIGTERM)", "SIGTERM"],
  ["a kill -9 and a restart", 9],
] as const) {
  describe(how, () => {
    test("keeps every queued request in order with the holder; B then C get the slot; the wake_tokens resume their places", async () => {
      const first = await start();
      const pool = "restart";
      expect(await first.call("configure_pool", { pool, capacity: 1, expected_version: 0, author: "e2e", reason: "test set-up" })).toMatchObject({ configured: true });
      const a = await first.call("acquire_slot", { agent_id: "A", pool, reason: "build" });
      expect(a.granted).toBe(true);
      const b = await first.call("acquire_slot", { agent_id: "B", pool, reason: "tests" });
      const c = await first.call("acquire_slot", { agent_id: "C", pool, reason: "docs" });
      expect([b.queue_position, c.queue_position]).toEqual([1, 2]);
      expect(await first.kill(signal)).not.toBeNull();

      const again = await start({ home: first.home, db: first.db });
      const p = (await again.call("list_pools")).find((x: any) => x.pool === pool);
      expect(p).toMatchObject({ in_use: 1, queued: 2 });
      expect(p.holders).toMatchObject([{ agent_id: "A", reason: "build" }]);
      expect(p.waiters.map((w: any) => [w.agent_id, w.state, w.blocked])).toEqual([
        ["B", "queued", false],
        ["C", "queued", false],
      ]);
      // Each wake_token resumes its own place (no second one is taken).
      expect(await again.call("acquire_slot", { agent_id: "C", pool, wake_token: c.wake_token })).toMatchObject({ granted: false, queue_position: 2, wake_token: c.wake_token });
      expect(await again.call("acquire_slot", { agent_id: "B", pool, wake_token: b.wake_token })).toMatchObject({ granted: false, queue_position: 1, wake_token: b.wake_token });

      expect(await again.call("release_slot", { slot_token: a.slot_token })).toEqual({ released: true });
      // C is not next: the freed slot is B's offer, and C stays queued behind it.
      expect(await again.call("acquire_slot", { agent_id: "C", pool, wake_token: c.wake_token })).toMatchObject({ granted: false, queue_position: 2 });
      const bGot = await again.call("acquire_slot", { agent_id: "B", pool, wake_token: b.wake_token });
      expect(bGot).toMatchObject({ granted: true, pool });
      expect(await again.call("release_slot", { slot_token: bGot.slot_token })).toEqual({ released: true });
      const cGot = await again.call("acquire_slot", { agent_id: "C", pool, wake_token: c.wake_token });
      expect(cGot).toMatchObject({ granted: true, pool });
      const after = (await again.call("list_pools")).find((x: any) => x.pool === pool);
      expect(after).toMatchObject({ in_use: 1, queued: 0 });
      // Nothing was journalled as abandoned.
      const log = await again.call("watch_changes", { since_revision: 0, resource_prefix: pool });
      expect(log.changes.length).toBeGreaterThan(0);
      expect(log.changes.filter((ch: any) => /abandoned/.test(ch.reason ?? ""))).toEqual([]);
      await again.kill();
    });
  });
}
