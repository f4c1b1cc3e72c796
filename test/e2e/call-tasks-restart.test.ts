// A call task survives a restart (docs/tasks.md): after a graceful stop (SIGTERM) or a kill -9
// and a start on the same store, the working task is still working, in its place in line (ahead
// of a waiter that queued after it), and completes with the lock when the holder releases it.
// On PostgreSQL (AIRLOCK_TEST_STORE=postgres) the restarted daemon has a new name and takes the
// task over from the old one: at once after a graceful stop, once its heartbeat lapses after a kill.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { getTask, rpcOf, settled, taskCall, toolJson } from "../helpers/call-tasks.ts";
import { useDaemonStarter } from "../helpers/daemon.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

const start = useDaemonStarter();

for (const [how, signal] of [
  ["a graceful restart (SIGTERM)", "SIGTERM"],
  ["a kill -9 and a restart", 9],
] as const) {
  describe(how, () => {
    test("keeps the working task in its place; it completes with the lock on release", async () => {
      const first = await start();
      const held = await first.call("lock_resource", { name: "ct-restart", agent_id: "A", ttl_seconds: 600 });
      const t = await taskCall(rpcOf(first), "lock_resource", { name: "ct-restart", agent_id: "B", wait_seconds: 900 });
      expect(t.resultType).toBe("task");
      // C queues behind B (an ordinary call whose 1 s wait ends: it keeps its place, detached).
      const c = await first.call("lock_resource", { name: "ct-restart", agent_id: "C", wait_seconds: 1 });
      expect(c).toMatchObject({ locked: false, queue_position: 2 });
      expect(await first.kill(signal)).not.toBeNull();

      const again = await start({ home: first.home, db: first.db });
      const rpc = rpcOf(again);
      expect((await getTask(rpc, t.taskId)).result).toMatchObject({ taskId: t.taskId, status: "working" });
      const line = async () => {
        const lock = ((await again.call("list_locks")) as any[]).find((l) => l.name === "ct-restart");
        return JSON.stringify(lock.waiters.map((w: any) => [w.agent_id, w.blocked]));
      };
      // The task's call blocks again, in its place ahead of C.
      await until("the task to resume", async () => (await line()) === JSON.stringify([["B", true], ["C", false]]), 20_000, 50);
      expect(await again.call("unlock_resource", { name: "ct-restart", lock_token: held.lock_token })).toEqual({ released: true });
      const done = await settled(rpc, t.taskId);
      expect(toolJson(done.result)).toMatchObject({ locked: true });
      expect(((await again.call("list_locks")) as any[]).find((l) => l.name === "ct-restart")).toMatchObject({ agent_id: "B" });
      await again.kill();
    });
  });
}
