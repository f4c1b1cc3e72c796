// Call tasks on two daemons sharing one PostgreSQL database (docs/tasks.md, docs/cluster.md): a
// task created on A is read and cancelled on B, and a release on B completes A's task. Skipped
// without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import { cancelTask, getTask, rpcOf, settled, taskCall, toolJson } from "../helpers/call-tasks.ts";
import { useCluster } from "../helpers/cluster.ts";
import { describePg } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

describePg("call tasks across two daemons", () => {
  const c = useCluster(2);

  test("a task made on A is read on B, and a release on B completes it with the lock", async () => {
    const [a, b] = c.daemons as [any, any];
    const held = await b.call("lock_resource", { name: "ct-cluster", agent_id: "H" });
    const t = await taskCall(rpcOf(a), "lock_resource", { name: "ct-cluster", agent_id: "W", wait_seconds: 600 });
    expect(t.resultType).toBe("task");
    expect((await getTask(rpcOf(b), t.taskId)).result).toMatchObject({ taskId: t.taskId, status: "working" });
    expect(await b.call("unlock_resource", { name: "ct-cluster", lock_token: held.lock_token })).toEqual({ released: true });
    const done = await settled(rpcOf(b), t.taskId);
    expect(toolJson(done.result)).toMatchObject({ locked: true });
    const lock = ((await a.call("list_locks")) as any[]).find((l) => l.name === "ct-cluster");
    expect(lock).toMatchObject({ agent_id: "W" });
  });

  test("a task made on A and cancelled on B leaves the line: the next waiter is served", async () => {
    const [a, b] = c.daemons as [any, any];
    const held = await a.call("lock_resource", { name: "ct-cluster-cancel", agent_id: "H" });
    const first = await taskCall(rpcOf(a), "lock_resource", { name: "ct-cluster-cancel", agent_id: "W1", wait_seconds: 600 });
    const next = await taskCall(rpcOf(b), "lock_resource", { name: "ct-cluster-cancel", agent_id: "W2", wait_seconds: 600 });
    expect([first.resultType, next.resultType]).toEqual(["task", "task"]);
    expect((await cancelTask(rpcOf(b), first.taskId)).result).toMatchObject({ resultType: "complete" });
    expect((await getTask(rpcOf(a), first.taskId)).result.status).toBe("cancelled");
    await until("W1 to leave the line on A", async () => {
      const l = ((await a.call("list_locks")) as any[]).find((x) => x.name === "ct-cluster-cancel");
      return l && l.waiters.map((w: any) => w.agent_id).join() === "W2";
    });
    await a.call("unlock_resource", { name: "ct-cluster-cancel", lock_token: held.lock_token });
    expect(toolJson((await settled(rpcOf(a), next.taskId)).result)).toMatchObject({ locked: true });
    expect((await getTask(rpcOf(b), first.taskId)).result.status).toBe("cancelled");
  });
});
