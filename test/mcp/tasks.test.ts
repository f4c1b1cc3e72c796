// The task queue over the wire: push_task, claim_next_task, complete_task, fail_task,
// list_tasks, and the renew_task extension.
import { describe, expect, test } from "bun:test";
import { isSettled, makeApp, until } from "./rpc.ts";

const keys = (o: object) => Object.keys(o).sort();

describe("push_task", () => {
  test("answers {id} with increasing ids", async () => {
    const a = await makeApp();
    const one = await a.call("push_task", { queue: "q", payload: "build" });
    const two = await a.call("push_task", { queue: "q", payload: "test" });
    expect(keys(one)).toEqual(["id"]);
    expect(typeof one.id).toBe("number");
    expect(two.id).toBeGreaterThan(one.id);
  });

  test("a non-string payload is refused, naming the field, and nothing is queued", async () => {
    const a = await makeApp();
    expect(await a.callError("push_task", { queue: "q", payload: { cmd: "make" } })).toBe("payload must be a string (got an object)");
    expect(await a.callError("push_task", { queue: "q", payload: ["x"] })).toBe("payload must be a string (got an array)");
    expect(await a.callError("push_task", { queue: "q", payload: 1 })).toBe("payload must be a string (got 1)");
    expect(await a.call("list_tasks", { queue: "q" })).toEqual([]);
  });

  test("missing queue or payload is named", async () => {
    const a = await makeApp();
    expect(await a.callError("push_task", { payload: "p" })).toBe("missing queue");
    expect(await a.callError("push_task", { queue: "", payload: "p" })).toBe("missing queue");
    expect(await a.callError("push_task", { queue: "q" })).toBe("missing payload");
    expect(await a.callError("push_task", { queue: "q", payload: null })).toBe("missing payload");
    expect(await a.call("list_tasks", { queue: "q" })).toEqual([]);
  });

  test("a non-number priority is refused, naming the field", async () => {
    const a = await makeApp();
    expect(await a.callError("push_task", { queue: "q", payload: "p", priority: "high" })).toBe('priority must be a number (got "high")');
    expect(await a.call("list_tasks", { queue: "q" })).toEqual([]);
  });
});

describe("claim_next_task", () => {
  test("an empty queue answers {claimed:false}", async () => {
    expect(await (await makeApp()).call("claim_next_task", { queue: "q", agent_id: "w" })).toEqual({ claimed: false });
  });

  test("claims with claimed, id, payload and lease_token (plus lease expiry and attempts)", async () => {
    const a = await makeApp();
    const { id } = await a.call("push_task", { queue: "q", payload: "do it" });
    const c = await a.call("claim_next_task", { queue: "q", agent_id: "w" });
    expect(keys(c)).toEqual(["attempts", "claimed", "id", "lease_expires_in_seconds", "lease_token", "payload"]);
    expect(c).toMatchObject({ claimed: true, id, payload: "do it", lease_expires_in_seconds: 120, attempts: 1 });
    expect(c.lease_token).toMatch(/^[0-9a-f]{32}$/);
    expect(await a.call("claim_next_task", { queue: "q", agent_id: "w2" })).toEqual({ claimed: false });
  });

  test("takes the highest priority first, then the oldest", async () => {
    const a = await makeApp();
    await a.call("push_task", { queue: "q", payload: "low-old", priority: 1 });
    await a.call("push_task", { queue: "q", payload: "high", priority: 5.9 });
    await a.call("push_task", { queue: "q", payload: "low-new", priority: 1 });
    await a.call("push_task", { queue: "q", payload: "neg", priority: -1 });
    const order: string[] = [];
    for (let i = 0; i < 4; i++) order.push((await a.call("claim_next_task", { queue: "q", agent_id: "w" })).payload);
    expect(order).toEqual(["high", "low-old", "low-new", "neg"]);
  });

  test("lease_seconds sets the lease, and a lapsed lease requeues the task", async () => {
    const a = await makeApp();
    await a.call("push_task", { queue: "q", payload: "p" });
    const c = await a.call("claim_next_task", { queue: "q", agent_id: "w", lease_seconds: 10.5 });
    expect(c.lease_expires_in_seconds).toBe(10);
    a.clock.advance(10_000);
    expect((await a.call("list_tasks", { queue: "q" }))[0].state).toBe("pending");
    expect(await a.call("complete_task", { id: c.id, lease_token: c.lease_token })).toEqual({ completed: false });
  });

  test("lease_seconds below 1 is refused and nothing is claimed", async () => {
    const a = await makeApp();
    await a.call("push_task", { queue: "q", payload: "p" });
    expect(await a.callError("claim_next_task", { queue: "q", agent_id: "w", lease_seconds: 0 })).toContain("lease_seconds");
    expect((await a.call("list_tasks", { queue: "q" }))[0].state).toBe("pending");
  });

  test("missing queue or agent_id is named", async () => {
    const a = await makeApp();
    expect(await a.callError("claim_next_task", { agent_id: "w" })).toBe("missing queue");
    expect(await a.callError("claim_next_task", { queue: "q" })).toBe("missing agent_id");
    expect(await a.callError("claim_next_task", { queue: "q", agent_id: "" })).toBe("missing agent_id");
  });
});

describe("complete_task and fail_task", () => {
  async function claimed() {
    const a = await makeApp();
    await a.call("push_task", { queue: "q", payload: "p" });
    const c = await a.call("claim_next_task", { queue: "q", agent_id: "w" });
    return { a, c };
  }

  test("complete_task answers completed:true once, and the task is done", async () => {
    const { a, c } = await claimed();
    expect(await a.call("complete_task", { id: c.id, lease_token: c.lease_token })).toEqual({ completed: true });
    expect(await a.call("complete_task", { id: c.id, lease_token: c.lease_token })).toEqual({ completed: false });
    expect((await a.call("list_tasks", { queue: "q" }))[0].state).toBe("done");
  });

  test("a wrong lease_token completes nothing", async () => {
    const { a, c } = await claimed();
    expect(await a.call("complete_task", { id: c.id, lease_token: "0".repeat(32) })).toEqual({ completed: false });
    expect((await a.call("list_tasks", { queue: "q" }))[0].state).toBe("claimed");
  });

  test("fail_task requeues by default", async () => {
    const { a, c } = await claimed();
    expect(await a.call("fail_task", { id: c.id, lease_token: c.lease_token })).toEqual({ failed: true });
    expect((await a.call("list_tasks", { queue: "q" }))[0].state).toBe("pending");
    expect((await a.call("claim_next_task", { queue: "q", agent_id: "w2" })).id).toBe(c.id);
  });

  test("fail_task with requeue=false leaves the task in state failed", async () => {
    const { a, c } = await claimed();
    expect(await a.call("fail_task", { id: c.id, lease_token: c.lease_token, requeue: false })).toEqual({ failed: true });
    expect((await a.call("list_tasks", { queue: "q" }))[0].state).toBe("failed");
    expect(await a.call("claim_next_task", { queue: "q", agent_id: "w2" })).toEqual({ claimed: false });
    expect(await a.call("fail_task", { id: c.id, lease_token: c.lease_token })).toEqual({ failed: false });
  });

  test("requeue must be a boolean", async () => {
    const { a, c } = await claimed();
    expect(await a.callError("fail_task", { id: c.id, lease_token: c.lease_token, requeue: "no" })).toBe('requeue must be true or false (got "no")');
    expect((await a.call("list_tasks", { queue: "q" }))[0].state).toBe("claimed");
  });

  test("id and lease_token are required and typed", async () => {
    const { a, c } = await claimed();
    for (const tool of ["complete_task", "fail_task"]) {
      expect(await a.callError(tool, { lease_token: c.lease_token })).toBe("missing id");
      expect(await a.callError(tool, { id: c.id })).toBe("missing lease_token");
      expect(await a.callError(tool, { id: c.id, lease_token: "" })).toBe("missing lease_token");
      expect(await a.callError(tool, { id: null, lease_token: c.lease_token })).toBe("missing id");
      expect(await a.callError(tool, { id: String(c.id), lease_token: c.lease_token })).toBe(`id must be a number (got "${c.id}")`);
      expect(await a.callError(tool, { id: 0, lease_token: c.lease_token })).toContain("id must be >= 1");
    }
    expect((await a.call("list_tasks", { queue: "q" }))[0].state).toBe("claimed");
  });

  test("an id given as a float is truncated toward zero", async () => {
    const { a, c } = await claimed();
    expect(await a.call("complete_task", { id: c.id + 0.7, lease_token: c.lease_token })).toEqual({ completed: true });
  });
});

describe("list_tasks", () => {
  test("lists a queue's tasks by id; author only when given, lease fields only while claimed", async () => {
    const a = await makeApp();
    const t1 = await a.call("push_task", { queue: "q", payload: "one" });
    const t2 = await a.call("push_task", { queue: "q", payload: "two", author: "lead", priority: 3 });
    await a.call("push_task", { queue: "other", payload: "elsewhere" });
    const c = await a.call("claim_next_task", { queue: "q", agent_id: "w", lease_seconds: 60 });
    expect(c.id).toBe(t2.id);
    const list = await a.call("list_tasks", { queue: "q" });
    expect(list).toHaveLength(2);
    expect(keys(list[0])).toEqual(["attempts", "id", "payload", "priority", "queue", "state"]);
    expect(list[0]).toMatchObject({ id: t1.id, queue: "q", payload: "one", priority: 0, state: "pending" });
    expect(list[1]).toMatchObject({
      id: t2.id,
      queue: "q",
      payload: "two",
      priority: 3,
      state: "claimed",
      author: "lead",
      lease_agent: "w",
      lease_expires_in_seconds: 60,
    });
    await a.call("complete_task", { id: c.id, lease_token: c.lease_token });
    const after = (await a.call("list_tasks", { queue: "q" }))[1];
    expect(after.state).toBe("done");
    expect("lease_agent" in after).toBe(false);
    expect("lease_expires_in_seconds" in after).toBe(false);
  });
});

describe("renew_task (extension)", () => {
  test("extends the lease from now; a wrong token renews nothing", async () => {
    const a = await makeApp();
    await a.call("push_task", { queue: "q", payload: "p" });
    const c = await a.call("claim_next_task", { queue: "q", agent_id: "w", lease_seconds: 10 });
    a.clock.advance(8_000);
    expect(await a.call("renew_task", { id: c.id, lease_token: c.lease_token, lease_seconds: 30 })).toEqual({ renewed: true, lease_expires_in_seconds: 30 });
    expect((await a.call("renew_task", { id: c.id, lease_token: "x" })).renewed).toBe(false);
    a.clock.advance(20_000);
    expect((await a.call("list_tasks", { queue: "q" }))[0]).toMatchObject({ state: "claimed", lease_expires_in_seconds: 10 });
  });
});

describe("claim_next_task waiting (extension)", () => {
  test("a blocked claim gets the task pushed while it waits", async () => {
    const a = await makeApp();
    const p = a.call("claim_next_task", { queue: "q", agent_id: "w", wait_seconds: 10 });
    await until(() => a.kernel.tasks.waits.size === 1, "the claim to wait");
    expect(await isSettled(p)).toBe(false);
    const { id } = await a.call("push_task", { queue: "q", payload: "fresh" });
    expect(await p).toMatchObject({ claimed: true, id, payload: "fresh" });
  });

  test("a blocked claim answers {claimed:false} when wait_seconds pass", async () => {
    const a = await makeApp();
    const p = a.call("claim_next_task", { queue: "q", agent_id: "w", wait_seconds: 3 });
    await until(() => a.kernel.tasks.waits.size === 1, "the claim to wait");
    a.clock.advance(3_000);
    expect(await p).toEqual({ claimed: false });
  });
});

describe("max_attempts (extension)", () => {
  test("a task that fails max_attempts times goes to state failed instead of looping", async () => {
    const a = await makeApp();
    await a.call("push_task", { queue: "q", payload: "flaky", max_attempts: 2 });
    for (let i = 0; i < 2; i++) {
      const c = await a.call("claim_next_task", { queue: "q", agent_id: "w" });
      expect(c.claimed).toBe(true);
      expect(await a.call("fail_task", { id: c.id, lease_token: c.lease_token })).toEqual({ failed: true });
    }
    expect((await a.call("list_tasks", { queue: "q" }))[0]).toMatchObject({ state: "failed", attempts: 2 });
    expect(await a.call("claim_next_task", { queue: "q", agent_id: "w" })).toEqual({ claimed: false });
  });

  test("max_attempts below 1 is refused and nothing is queued", async () => {
    const a = await makeApp();
    expect(await a.callError("push_task", { queue: "q", payload: "p", max_attempts: 0 })).toContain("max_attempts must be >= 1");
    expect(await a.call("list_tasks", { queue: "q" })).toEqual([]);
  });
});
