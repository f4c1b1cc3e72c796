// Call tasks through the HTTP app with a ManualClock (docs/tasks.md): the end of a task's wait
// (completed, not granted, with its wake_token), the ttl of a result (an unfetched one hands
// back its grant: the lock, the slot, the claim, the queue task; a fetched one does not), and
// the ordinary path's clamp to 50 s without the extension. Time moves only when told to.
import { describe, expect, test } from "bun:test";
import { CALL_TASK_TTL_MS } from "../../src/mcp/call-tasks.ts";
import { getTask, META_NO_TASKS, type Rpc, routing, taskCall, toolJson } from "../helpers/call-tasks.ts";
import { isSettled, makeApp, type TestApp, until } from "./rpc.ts";

const rpcOf =
  (a: TestApp): Rpc =>
  async (method, params, headers) =>
    (await a.send({ body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }), headers })).json();

async function finished(a: TestApp, taskId: string): Promise<any> {
  let last: any;
  await until(async () => (last = (await getTask(rpcOf(a), taskId)).result).status !== "working", `task ${taskId} to finish`);
  return last;
}

describe("a call task", () => {
  test("whose wait ends ungranted completes with the answer a blocked call gets: not granted, with its wake_token", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "A", ttl_seconds: 3000 });
    const t = await taskCall(rpcOf(a), "lock_resource", { name: "r", agent_id: "B", wait_seconds: 60 });
    expect(t.resultType).toBe("task");
    a.clock.advance(59_000);
    expect((await getTask(rpcOf(a), t.taskId)).result.status).toBe("working");
    a.clock.advance(1_000);
    const done = await finished(a, t.taskId);
    expect(done.status).toBe("completed");
    const got = toolJson(done.result);
    const wakeToken: string = got.wake_token;
    expect(got).toMatchObject({ locked: false, held_by: "A", queue_position: 1 });
    // The wake_token keeps the place, as after a timed-out blocked call.
    expect(await a.call("lock_resource", { name: "r", agent_id: "B", wake_token: wakeToken })).toMatchObject({ queue_position: 1 });
  });

  test("asks at most an hour: a longer wait ends after 3600 s", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "A", ttl_seconds: 9000 });
    const t = await taskCall(rpcOf(a), "lock_resource", { name: "r", agent_id: "B", wait_seconds: 1e9 });
    a.clock.advance(3599_000);
    expect((await getTask(rpcOf(a), t.taskId)).result.status).toBe("working");
    a.clock.advance(1_000);
    expect(toolJson((await finished(a, t.taskId)).result)).toMatchObject({ locked: false });
  });

  test("whose result is never fetched within its ttl hands the lock back, and is gone", async () => {
    const a = await makeApp();
    const held = await a.call("lock_resource", { name: "r", agent_id: "A" });
    const t = await taskCall(rpcOf(a), "lock_resource", { name: "r", agent_id: "B", wait_seconds: 600 });
    await a.call("unlock_resource", { name: "r", lock_token: held.lock_token });
    await until(async () => ((await a.call("list_locks")) as any[]).some((l) => l.agent_id === "B"), "B to hold r");
    a.clock.advance(CALL_TASK_TTL_MS);
    await until(async () => ((await a.call("list_locks")) as any[]).length === 0, "the lock to be handed back");
    expect((await getTask(rpcOf(a), t.taskId)).error.code).toBe(-32602);
    const log = await a.call("watch_changes", { since_revision: 0, kinds: ["call_task."] });
    expect(log.changes.map((c: any) => c.kind)).toEqual(["call_task.created", "call_task.completed", "call_task.expired"]);
  });

  test("whose result was fetched keeps its grant when the ttl ends", async () => {
    const a = await makeApp();
    const held = await a.call("lock_resource", { name: "r", agent_id: "A" });
    const t = await taskCall(rpcOf(a), "lock_resource", { name: "r", agent_id: "B", wait_seconds: 600 });
    await a.call("unlock_resource", { name: "r", lock_token: held.lock_token });
    expect(toolJson((await finished(a, t.taskId)).result).locked).toBe(true);
    a.clock.advance(CALL_TASK_TTL_MS);
    await until(async () => (await getTask(rpcOf(a), t.taskId)).error?.code === -32602, "the task to be dropped");
    expect(((await a.call("list_locks")) as any[]).map((l) => l.agent_id)).toEqual(["B"]);
  });

  test("unfetched, hands back a slot, a path claim and a claimed queue task (requeued)", async () => {
    const a = await makeApp();
    const rpc = rpcOf(a);
    await a.call("configure_pool", { pool: "p", capacity: 1, expected_version: 0, author: "t", reason: "set-up" });
    const slot = await a.call("acquire_slot", { agent_id: "A", pool: "p" });
    const claim = await a.call("claim_paths", { agent_id: "A", room: "room", paths: ["src/**"] });
    const tSlot = await taskCall(rpc, "acquire_slot", { agent_id: "B", pool: "p", wait_seconds: 600 });
    const tClaim = await taskCall(rpc, "claim_paths", { agent_id: "B", room: "room", paths: ["src/x.ts"], wait_seconds: 600 });
    const tQueue = await taskCall(rpc, "claim_next_task", { queue: "q", agent_id: "B", wait_seconds: 600 });
    expect([tSlot.resultType, tClaim.resultType, tQueue.resultType]).toEqual(["task", "task", "task"]);
    await a.call("release_slot", { slot_token: slot.slot_token });
    await a.call("release_paths", { claim_token: claim.claim_token });
    const { id } = await a.call("push_task", { queue: "q", payload: "x" });
    await until(async () => {
      const tasks = (await a.call("list_tasks", { queue: "q" })) as any[];
      return tasks.some((x) => x.state === "claimed");
    }, "B to claim the queue task");
    a.clock.advance(CALL_TASK_TTL_MS);
    await until(async () => ((await a.call("list_pools")) as any[]).find((p) => p.pool === "p")?.in_use === 0, "the slot handed back");
    await until(async () => ((await a.call("list_path_claims", {})) as any[]).length === 0, "the claim handed back");
    await until(async () => ((await a.call("list_tasks", { queue: "q" })) as any[]).find((x) => x.id === id)?.state === "pending", "the task requeued");
  });

  test("unfetched, a read_messages task hands its messages back: unread again", async () => {
    const a = await makeApp();
    await a.call("register_agent", { agent_id: "A", ttl_seconds: 3600 });
    await a.call("register_agent", { agent_id: "B", ttl_seconds: 3600 });
    const t = await taskCall(rpcOf(a), "read_messages", { agent_id: "B", wait_seconds: 600 });
    expect(t.resultType).toBe("task");
    await a.call("send_message", { from: "A", to: ["B"], body: "your turn" });
    // The task's read marked it read...
    await until(async () => (await a.call("read_messages", { agent_id: "B", peek: true })).unread === 0, "the task to read the message");
    // ...and its result is never fetched: at its ttl the message is B's to read again.
    a.clock.advance(CALL_TASK_TTL_MS);
    await until(async () => (await a.call("read_messages", { agent_id: "B", peek: true })).unread === 1, "the message handed back");
    expect((await a.call("read_messages", { agent_id: "B" })).messages.map((m: any) => m.body)).toEqual(["your turn"]);
  });
});

describe("without the extension", () => {
  test("a wait is clamped to 50 s, as ever", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "A", ttl_seconds: 3000 });
    const p = a.call("lock_resource", { name: "r", agent_id: "B", wait_seconds: 600 });
    await until(async () => ((await a.call("list_locks")) as any[])[0].waiters.length === 1, "B to block");
    a.clock.advance(49_000);
    expect(await isSettled(p)).toBe(false);
    a.clock.advance(1_000);
    expect(await p).toMatchObject({ locked: false, wake_token: expect.any(String) });
  });

  test("a modern tools/call that declares no extension is ordinary: clamped to 50 s", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "A", ttl_seconds: 3000 });
    const p = rpcOf(a)("tools/call", { name: "lock_resource", arguments: { name: "r", agent_id: "B", wait_seconds: 600 }, _meta: META_NO_TASKS }, routing("tools/call", "lock_resource"));
    await until(async () => ((await a.call("list_locks")) as any[])[0].waiters.length === 1, "B to block");
    a.clock.advance(50_000);
    expect(toolJson((await p).result)).toMatchObject({ locked: false });
  });
});
