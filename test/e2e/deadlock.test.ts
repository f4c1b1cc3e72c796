// Deadlock detection over real HTTP: two agents each hold what the other waits for, across a
// lock group and a slot; the call that closes the cycle is answered at once with the cycle,
// the other keeps blocking until the victim lets go. Status shows the wait-for graph.
import { expect, setDefaultTimeout, test } from "bun:test";
import { useDaemon } from "../helpers/daemon.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

const d = useDaemon();

test("a lock group and a slot: the closing call answers at once with deadlock.cycle, the other keeps waiting", async () => {
  await d.call("configure_pool", { pool: "gpu", capacity: 1, expected_version: 0, author: "test", reason: "one gpu" });
  expect((await d.call("acquire_slot", { agent_id: "trainer", pool: "gpu" })).granted).toBe(true);
  const db = await d.call("lock_resource", { name: "db", agent_id: "migrator", ttl_seconds: 60 });
  expect(db.locked).toBe(true);

  let trainerDone = false;
  const trainer = d.call("lock_resources", { names: ["db", "cache"], agent_id: "trainer", ttl_seconds: 60, wait_seconds: 20 });
  void trainer.then(() => (trainerDone = true));
  // The trainer is blocked: the status shows its wait for the migrator.
  let s: any;
  await until("the trainer blocked", async () => {
    s = (await d.rpc("airlock/status", {})).result;
    return s.graph.edges.length > 0;
  });
  expect(s.graph.edges).toEqual([{ agent_id: "trainer", waits_for: "migrator", resource: "db", kind: "lock", blocked: true }]);
  expect(s.agents).toEqual([]); // neither registered presence: the graph is by agent id alone

  const t0 = performance.now();
  const migrator = await d.call("acquire_slot", { agent_id: "migrator", pool: "gpu", wait_seconds: 20 });
  expect(performance.now() - t0).toBeLessThan(5000); // at once, not after wait_seconds
  expect(migrator.granted).toBe(false);
  expect(migrator.deadlock).toEqual({
    cycle: [
      { agent_id: "migrator", waits_for: "trainer", resource: "gpu" },
      { agent_id: "trainer", waits_for: "migrator", resource: "db" },
    ],
  });
  expect(migrator.wake_token).toBeUndefined();
  expect(migrator.retry_with).toBeUndefined();
  expect(trainerDone).toBe(false);

  // The victim lets go of db: the trainer's group is granted.
  expect(await d.call("unlock_resource", { name: "db", lock_token: db.lock_token })).toEqual({ released: true });
  const got = await trainer;
  expect(got.locked).toBe(true);
  expect(Object.keys(got.tokens).sort()).toEqual(["cache", "db"]);

  // The journal says what happened.
  const feed = await d.call("watch_changes", { kinds: ["deadlock."] });
  expect(feed.changes).toHaveLength(1);
  expect(feed.changes[0]).toMatchObject({ kind: "deadlock.detected", resource: "gpu", agent_id: "migrator" });
  expect(feed.changes[0].cycle).toHaveLength(2);
});
