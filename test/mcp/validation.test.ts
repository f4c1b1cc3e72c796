// Argument validation across all 22 v2 tools: a missing required argument is named
// ("missing <field>", also for "" and null), a wrong type names the field, and a bad call
// changes nothing.
import { describe, expect, test } from "bun:test";
import { makeApp, type TestApp } from "./rpc.ts";

type Args = Record<string, unknown>;

// A valid call per tool, and which of its arguments are required.
const VALID: Record<string, { args: Args; required: string[] }> = {
  lock_resource: { args: { name: "r", agent_id: "a" }, required: ["name", "agent_id"] },
  unlock_resource: { args: { name: "r", lock_token: "t" }, required: ["name"] },
  renew_lock: { args: { name: "r", lock_token: "t" }, required: ["name"] },
  list_locks: { args: {}, required: [] },
  lock_resources: { args: { names: ["a", "b"], agent_id: "a" }, required: ["names", "agent_id"] },
  set_note: { args: { key: "k", value: "v" }, required: ["key", "value"] },
  get_note: { args: { key: "k" }, required: ["key"] },
  list_notes: { args: {}, required: [] },
  delete_note: { args: { key: "k" }, required: ["key"] },
  set_note_if: { args: { key: "k", expected_value: "", new_value: "v" }, required: ["key", "expected_value", "new_value"] },
  increment_counter: { args: { name: "c" }, required: ["name"] },
  register_agent: { args: { agent_id: "a" }, required: ["agent_id"] },
  unregister_agent: { args: { agent_id: "a" }, required: ["agent_id"] },
  list_agents: { args: {}, required: [] },
  signal_event: { args: { name: "e" }, required: ["name"] },
  wait_for_event: { args: { name: "e", wait_seconds: 0 }, required: ["name"] },
  clear_event: { args: { name: "e" }, required: ["name"] },
  push_task: { args: { queue: "q", payload: "p" }, required: ["queue", "payload"] },
  claim_next_task: { args: { queue: "q", agent_id: "a" }, required: ["queue", "agent_id"] },
  complete_task: { args: { id: 1, lease_token: "t" }, required: ["id", "lease_token"] },
  fail_task: { args: { id: 1, lease_token: "t" }, required: ["id", "lease_token"] },
  list_tasks: { args: { queue: "q" }, required: ["queue"] },
};

// Arguments that may legitimately be "" (values compare and store as text).
const MAY_BE_EMPTY = new Set(["value", "payload", "expected_value", "new_value"]);

// A wrong-typed value for every argument, by its kind.
const WRONG: Record<string, unknown> = {
  name: 42, agent_id: true, key: ["k"], value: { v: 1 }, author: 7, queue: {}, payload: 3.5,
  lock_token: 123, wake_token: false, expected_value: 0, new_value: [], names: "a,b",
  ttl_seconds: "60", ttl_minutes: "1", wait_seconds: "5", by: "1", last_seen_generation: [0],
  priority: "high", lease_seconds: {}, id: "1", requeue: "yes",
};

/** Everything a tool call could have changed, to prove a refused call changed nothing. */
async function snapshot(a: TestApp) {
  return JSON.stringify({
    locks: await a.call("list_locks"),
    notes: await a.call("list_notes"),
    agents: await a.call("list_agents"),
    tasks: await a.call("list_tasks", { queue: "q" }),
    counter: await a.kernel.counters.increment("c", 0),
    event: await a.kernel.events.generation("e"),
  });
}

test("the validation table covers all 22 v2 tools", () => {
  expect(Object.keys(VALID)).toHaveLength(22);
});

for (const [tool, { args, required }] of Object.entries(VALID)) {
  describe(tool, () => {
    test("its valid call is answered as a result, not a tool error", async () => {
      const r = await (await makeApp()).callRaw(tool, args);
      expect(r.isError).toBeUndefined();
      // renew_lock of an absent lock is a value ({renewed:false, error}), not a failure.
      if (tool !== "renew_lock") expect(JSON.parse(r.content[0]!.text).error).toBeUndefined();
    });

    for (const field of required) {
      test(`a missing ${field} is {"error":"missing ${field}"}, also when null${MAY_BE_EMPTY.has(field) ? "" : ' or ""'}`, async () => {
        const a = await makeApp();
        const before = await snapshot(a);
        const without = { ...args };
        delete without[field];
        expect(await a.callError(tool, without)).toBe(`missing ${field}`);
        expect(await a.callError(tool, { ...args, [field]: null })).toBe(`missing ${field}`);
        if (!MAY_BE_EMPTY.has(field) && typeof args[field] === "string") {
          expect(await a.callError(tool, { ...args, [field]: "" })).toBe(`missing ${field}`);
        }
        expect(await snapshot(a)).toBe(before);
      });
    }

    const fields = Object.keys(WRONG).filter((f) => f in args || optionalOf(tool).includes(f));
    for (const field of fields) {
      test(`a wrong type for ${field} is refused with a message naming ${field}`, async () => {
        const a = await makeApp();
        const before = await snapshot(a);
        const msg = await a.callError(tool, { ...args, [field]: WRONG[field] });
        expect(msg).toContain(field);
        expect(msg).toMatch(/must be|missing/);
        expect(await snapshot(a)).toBe(before);
      });
    }
  });
}

function optionalOf(tool: string): string[] {
  const opt: Record<string, string[]> = {
    lock_resource: ["ttl_seconds", "ttl_minutes", "wait_seconds", "wake_token"],
    unlock_resource: ["agent_id"],
    renew_lock: ["agent_id", "ttl_seconds", "ttl_minutes"],
    lock_resources: ["ttl_seconds", "ttl_minutes"],
    set_note: ["author", "ttl_seconds", "ttl_minutes"],
    set_note_if: ["author", "ttl_seconds", "ttl_minutes"],
    increment_counter: ["by"],
    register_agent: ["ttl_seconds", "ttl_minutes"],
    wait_for_event: ["last_seen_generation"],
    push_task: ["author", "priority"],
    claim_next_task: ["lease_seconds", "wait_seconds"],
    fail_task: ["requeue"],
  };
  return opt[tool] ?? [];
}

test("messages show the offending value", async () => {
  const a = await makeApp();
  expect(await a.callError("lock_resource", { name: 42, agent_id: "a" })).toBe("name must be a string (got 42)");
  expect(await a.callError("lock_resource", { name: "r", agent_id: "a", ttl_seconds: "60" })).toBe('ttl_seconds must be a number (got "60")');
  expect(await a.callError("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 1e12 })).toBe("ttl_seconds must be <= 31622400 (got 1000000000000)");
  expect(await a.callError("set_note", { key: ["k"], value: "v" })).toBe("key must be a string (got an array)");
});
