// The MCP tasks extension against a real daemon over HTTP (docs/tasks.md): a blocking call that
// asks to wait more than 50 s from a client declaring io.modelcontextprotocol/tasks becomes a
// task at once, keeps its place in line, and completes when granted: a lock, a slot, a path
// claim, a queue task. Cancelling withdraws the place (the next waiter is served); the deadlock
// check applies; hostile params are -32602 and change nothing.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { cancelTask, getTask, META, META_NO_TASKS, routing, rpcOf, settled, taskCall, toolJson } from "../helpers/call-tasks.ts";
import { runCli, useDaemon } from "../helpers/daemon.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

const d = useDaemon();
const rpc = rpcOf(d);
/** tasks/cancel's answer: an empty result, with the serverInfo _meta every modern result carries. */
const EMPTY_ACK = { resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": { name: "airlock", version: expect.any(String) } } };

/** The lock's waiters, as list_locks shows them. */
async function waitersOf(name: string): Promise<string[]> {
  const l = ((await d.call("list_locks")) as any[]).find((x) => x.name === name);
  return l ? l.waiters.map((w: any) => w.agent_id) : [];
}

describe("a blocking call from a task-capable client", () => {
  test("that is answered at once is answered as an ordinary call", async () => {
    const r = await taskCall(rpc, "lock_resource", { name: "ct-free", agent_id: "A", wait_seconds: 600 });
    expect(r.resultType).not.toBe("task");
    expect(r.taskId).toBeUndefined();
    expect(toolJson(r)).toMatchObject({ locked: true });
  });

  test("that blocks becomes a working task at once, polled, and completed with the lock when it frees", async () => {
    const held = await d.call("lock_resource", { name: "ct-lock", agent_id: "A" });
    const t = await taskCall(rpc, "lock_resource", { name: "ct-lock", agent_id: "B", wait_seconds: 600 });
    // The flat CreateTaskResult, and the serverInfo _meta every modern result carries.
    expect(Object.keys(t).sort()).toEqual(["_meta", "createdAt", "lastUpdatedAt", "pollIntervalMs", "resultType", "status", "taskId", "ttlMs"]);
    expect(t).toMatchObject({ resultType: "task", status: "working" });
    expect(Number.isInteger(t.ttlMs) && Number.isInteger(t.pollIntervalMs)).toBe(true);
    expect(t.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const working = (await getTask(rpc, t.taskId)).result;
    expect(working).toMatchObject({ taskId: t.taskId, status: "working" });
    expect(working.result).toBeUndefined();
    // The task stands in line like a blocked call.
    expect(await waitersOf("ct-lock")).toEqual(["B"]);
    // Status shows it as a blocked waiter, marked as a task.
    const status = (await d.rpc("airlock/status")).result;
    expect(status.locks.find((l: any) => l.name === "ct-lock").waiters).toEqual([{ agent_id: "B", waiting_seconds: expect.any(Number), blocked: true, task: true }]);
    expect(await d.call("unlock_resource", { name: "ct-lock", lock_token: held.lock_token })).toEqual({ released: true });
    const done = await settled(rpc, t.taskId);
    expect(done.status).toBe("completed");
    const got = toolJson(done.result);
    expect(got).toMatchObject({ locked: true });
    expect(((await d.call("list_locks")) as any[]).find((l) => l.name === "ct-lock")).toMatchObject({ agent_id: "B" });
    // A fetched result is read again within its ttl.
    expect((await getTask(rpc, t.taskId)).result.status).toBe("completed");
  });

  test("completes with a slot when capacity frees", async () => {
    const pool = "ct-pool";
    await d.call("configure_pool", { pool, capacity: 1, expected_version: 0, author: "e2e", reason: "test set-up" });
    const a = await d.call("acquire_slot", { agent_id: "A", pool });
    expect(a.granted).toBe(true);
    const t = await taskCall(rpc, "acquire_slot", { agent_id: "B", pool, wait_seconds: 900 });
    expect(t.resultType).toBe("task");
    const shown = (await d.rpc("airlock/status")).result.pools.find((p: any) => p.pool === pool);
    expect(shown.waiters).toMatchObject([{ agent_id: "B", blocked: true, task: true }]);
    const human = await runCli(["status"], { AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port) });
    expect(human.stdout).toMatch(/B .*blocked.*\(task\)/);
    await d.call("release_slot", { slot_token: a.slot_token });
    const done = await settled(rpc, t.taskId);
    expect(toolJson(done.result)).toMatchObject({ granted: true, pool });
  });

  test("completes with a path claim when the overlapping claim is released", async () => {
    const a = await d.call("claim_paths", { agent_id: "A", room: "ct-room", paths: ["src/**"] });
    expect(a.granted).toBe(true);
    const t = await taskCall(rpc, "claim_paths", { agent_id: "B", room: "ct-room", paths: ["src/a.ts"], wait_seconds: 120 });
    expect(t.resultType).toBe("task");
    await d.call("release_paths", { claim_token: a.claim_token });
    const done = await settled(rpc, t.taskId);
    expect(toolJson(done.result)).toMatchObject({ granted: true, paths: ["src/a.ts"] });
  });

  test("completes with a queue task when one is pushed", async () => {
    const t = await taskCall(rpc, "claim_next_task", { queue: "ct-queue", agent_id: "B", wait_seconds: 3600 });
    expect(t.resultType).toBe("task");
    const { id } = await d.call("push_task", { queue: "ct-queue", payload: "build it" });
    const done = await settled(rpc, t.taskId);
    expect(toolJson(done.result)).toMatchObject({ claimed: true, id, payload: "build it" });
  });

  test("completes when an event fires, and when a change arrives in the feed", async () => {
    const ev = await taskCall(rpc, "wait_for_event", { name: "ct-event", last_seen_generation: 0, wait_seconds: 300 });
    const { revision } = await d.call("watch_changes", { since_revision: 0, limit: 1 });
    const head = (await d.call("watch_changes", { since_revision: revision, limit: 1000 })).revision;
    const feed = await taskCall(rpc, "watch_changes", { since_revision: head, kinds: ["note."], wait_seconds: 300 });
    expect([ev.resultType, feed.resultType]).toEqual(["task", "task"]);
    await d.call("signal_event", { name: "ct-event" });
    expect(toolJson((await settled(rpc, ev.taskId)).result)).toMatchObject({ fired: true, generation: 1 });
    await d.call("set_note", { key: "ct-note", value: "v" });
    expect(toolJson((await settled(rpc, feed.taskId)).result).changes).toMatchObject([{ kind: "note.set", resource: "ct-note" }]);
  });

  test("cancelled, withdraws its place: the next waiter is served, and the task reads cancelled", async () => {
    const held = await d.call("lock_resource", { name: "ct-cancel", agent_id: "A" });
    const b = await taskCall(rpc, "lock_resource", { name: "ct-cancel", agent_id: "B", wait_seconds: 600 });
    const c = await taskCall(rpc, "lock_resource", { name: "ct-cancel", agent_id: "C", wait_seconds: 600 });
    expect(await waitersOf("ct-cancel")).toEqual(["B", "C"]);
    const ack = await cancelTask(rpc, b.taskId);
    expect(ack.result).toEqual(EMPTY_ACK);
    expect((await getTask(rpc, b.taskId)).result.status).toBe("cancelled");
    expect(await waitersOf("ct-cancel")).toEqual(["C"]);
    await d.call("unlock_resource", { name: "ct-cancel", lock_token: held.lock_token });
    expect(toolJson((await settled(rpc, c.taskId)).result)).toMatchObject({ locked: true });
    expect((await getTask(rpc, b.taskId)).result.status).toBe("cancelled");
    // Cancelling a finished task is the same empty ack, and changes nothing.
    expect((await cancelTask(rpc, c.taskId)).result).toEqual(EMPTY_ACK);
    expect((await getTask(rpc, c.taskId)).result.status).toBe("completed");
  });

  test("that would close a deadlock is answered at once with the cycle, not made a task", async () => {
    await d.call("lock_resource", { name: "ct-x", agent_id: "A" });
    await d.call("lock_resource", { name: "ct-y", agent_id: "B" });
    const aWaits = await taskCall(rpc, "lock_resource", { name: "ct-y", agent_id: "A", wait_seconds: 600 });
    expect(aWaits.resultType).toBe("task");
    const r = await taskCall(rpc, "lock_resource", { name: "ct-x", agent_id: "B", wait_seconds: 600 });
    expect(r.resultType).not.toBe("task");
    expect(toolJson(r)).toMatchObject({ locked: false, deadlock: { cycle: expect.any(Array) } });
    await cancelTask(rpc, aWaits.taskId);
  });

  test("asking 50 s or less, or without the extension, is an ordinary call", async () => {
    await d.call("lock_resource", { name: "ct-plain", agent_id: "A" });
    const short = await taskCall(rpc, "lock_resource", { name: "ct-plain", agent_id: "B", wait_seconds: 1 });
    expect(toolJson(short)).toMatchObject({ locked: false, wake_token: expect.any(String) });
    const ac = new AbortController();
    const plain = d.rpc("tools/call", { name: "lock_resource", arguments: { name: "ct-plain", agent_id: "C", wait_seconds: 600 } }, { signal: ac.signal }).catch(() => "aborted");
    await until("C to block", async () => (await waitersOf("ct-plain")).includes("C"));
    ac.abort();
    expect(await plain).toBe("aborted");
  });
});

describe("tasks/get and tasks/cancel", () => {
  test("refuse an unknown or malformed taskId with -32602, and change nothing", async () => {
    await d.call("lock_resource", { name: "ct-hostile", agent_id: "A" });
    const t = await taskCall(rpc, "lock_resource", { name: "ct-hostile", agent_id: "B", wait_seconds: 600 });
    for (const taskId of [undefined, 42, "", null, { id: t.taskId }, [t.taskId], "x".repeat(100), "no-such-task"]) {
      for (const m of ["tasks/get", "tasks/cancel"]) {
        const r = await rpc(m, { taskId, _meta: META }, routing(m, taskId));
        expect(r.error?.code).toBe(-32602);
      }
    }
    expect((await d.rpc("tasks/get", [t.taskId])).error.code).toBe(-32602);
    expect((await getTask(rpc, t.taskId)).result.status).toBe("working");
    expect(await waitersOf("ct-hostile")).toEqual(["B"]);
    await cancelTask(rpc, t.taskId);
  });

  test("from a modern request that did not declare the extension are 400 with -32021; in the 2025 era they do not exist", async () => {
    for (const m of ["tasks/get", "tasks/cancel"]) {
      const res = await d.post(JSON.stringify({ jsonrpc: "2.0", id: 5, method: m, params: { taskId: "x", _meta: META_NO_TASKS } }), routing(m, "x"));
      expect(res.status).toBe(400);
      const body = (await res.json()) as any;
      expect(body.id).toBe(5);
      expect(body.error.code).toBe(-32021);
      expect(body.error.data.requiredCapabilities).toEqual({ extensions: { "io.modelcontextprotocol/tasks": {} } });
      expect((await d.rpc(m, { taskId: "x" })).error.code).toBe(-32601);
    }
  });

  test("are recorded in the journal: created, completed, cancelled", async () => {
    const log = await d.call("watch_changes", { since_revision: 0, kinds: ["call_task."], limit: 500 });
    const kinds = new Set(log.changes.map((c: any) => c.kind));
    expect([...kinds].sort()).toEqual(["call_task.cancelled", "call_task.completed", "call_task.created"]);
  });
});
