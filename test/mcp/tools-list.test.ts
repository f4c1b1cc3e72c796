// tools/list: v2's 22 tools in v2's order, each with a description and an object input schema
// whose required list and defaults match the spec.
import { expect, test } from "bun:test";
import { makeApp } from "./rpc.ts";

const V2_ORDER = [
  "lock_resource", "unlock_resource", "renew_lock", "list_locks", "lock_resources",
  "set_note", "get_note", "list_notes", "delete_note", "set_note_if", "increment_counter",
  "register_agent", "unregister_agent", "list_agents",
  "signal_event", "wait_for_event", "clear_event",
  "push_task", "claim_next_task", "complete_task", "fail_task", "list_tasks",
];

// The spec's arguments per tool (section 2): starred ones are required.
const ARGS: Record<string, { required: string[]; optional: string[] }> = {
  lock_resource: { required: ["name", "agent_id"], optional: ["ttl_seconds", "ttl_minutes", "wait_seconds", "wake_token"] },
  unlock_resource: { required: ["name"], optional: ["lock_token", "agent_id"] },
  renew_lock: { required: ["name"], optional: ["lock_token", "agent_id", "ttl_seconds", "ttl_minutes"] },
  list_locks: { required: [], optional: [] },
  lock_resources: { required: ["names", "agent_id"], optional: ["ttl_seconds", "ttl_minutes"] },
  set_note: { required: ["key", "value"], optional: ["author", "ttl_seconds", "ttl_minutes"] },
  get_note: { required: ["key"], optional: [] },
  list_notes: { required: [], optional: [] },
  delete_note: { required: ["key"], optional: [] },
  set_note_if: { required: ["key", "expected_value", "new_value"], optional: ["author", "ttl_seconds", "ttl_minutes"] },
  increment_counter: { required: ["name"], optional: ["by"] },
  register_agent: { required: ["agent_id"], optional: ["ttl_seconds", "ttl_minutes"] },
  unregister_agent: { required: ["agent_id"], optional: [] },
  list_agents: { required: [], optional: [] },
  signal_event: { required: ["name"], optional: [] },
  wait_for_event: { required: ["name"], optional: ["last_seen_generation", "wait_seconds"] },
  clear_event: { required: ["name"], optional: [] },
  push_task: { required: ["queue", "payload"], optional: ["author", "priority"] },
  claim_next_task: { required: ["queue", "agent_id"], optional: ["lease_seconds"] },
  complete_task: { required: ["id", "lease_token"], optional: [] },
  fail_task: { required: ["id", "lease_token"], optional: ["requeue"] },
  list_tasks: { required: ["queue"], optional: [] },
};

// Defaults the schema states as JSON Schema `default`.
const DEFAULTS: [string, string, unknown][] = [
  ["lock_resource", "wait_seconds", 0],
  ["wait_for_event", "wait_seconds", 25],
  ["wait_for_event", "last_seen_generation", 0],
  ["increment_counter", "by", 1],
  ["push_task", "priority", 0],
  ["claim_next_task", "lease_seconds", 120],
  ["fail_task", "requeue", true],
];

// Defaults stated in the description (TTLs have no JSON default: absent differs from 0 for notes).
const DESCRIBED: [string, string, string][] = [
  ["lock_resource", "ttl_seconds", "900"],
  ["renew_lock", "ttl_seconds", "900"],
  ["lock_resources", "ttl_seconds", "900"],
  ["register_agent", "ttl_seconds", "60"],
];

async function toolList(): Promise<any[]> {
  const r = await (await makeApp()).rpc("tools/list", {});
  return r.result.tools;
}

test("lists v2's 22 tools first, in v2's order", async () => {
  const names = (await toolList()).map((t) => t.name);
  expect(names.slice(0, 22)).toEqual(V2_ORDER);
});

test("lists every tool once", async () => {
  const names = (await toolList()).map((t) => t.name);
  expect(new Set(names).size).toBe(names.length);
});

test("extensions such as renew_task follow the v2 tools", async () => {
  const names = (await toolList()).map((t) => t.name);
  expect(names.indexOf("renew_task")).toBeGreaterThanOrEqual(22);
});

test("every tool has a description and an object input schema", async () => {
  for (const t of await toolList()) {
    expect(typeof t.description).toBe("string");
    expect(t.description.length).toBeGreaterThan(20);
    expect(t.inputSchema.type).toBe("object");
    expect(typeof t.inputSchema.properties).toBe("object");
    expect(t.inputSchema.$schema).toBeUndefined();
  }
});

for (const [name, spec] of Object.entries(ARGS)) {
  test(`${name} requires exactly ${spec.required.length ? spec.required.join(", ") : "nothing"} and documents every argument`, async () => {
    const tool = (await toolList()).find((t) => t.name === name);
    expect(tool).toBeDefined();
    expect([...(tool.inputSchema.required ?? [])].sort()).toEqual([...spec.required].sort());
    const props = Object.keys(tool.inputSchema.properties);
    for (const arg of [...spec.required, ...spec.optional]) expect(props).toContain(arg);
    for (const arg of props) {
      const p = tool.inputSchema.properties[arg];
      expect(typeof p.description).toBe("string");
      expect(["string", "number", "integer", "boolean", "array"]).toContain(p.type);
    }
  });
}

test("argument types match the wire: names are strings, numbers numbers, names[] an array of strings", async () => {
  const tools = new Map((await toolList()).map((t) => [t.name, t.inputSchema.properties]));
  expect(tools.get("lock_resource").name.type).toBe("string");
  expect(tools.get("lock_resource").ttl_seconds.type).toMatch(/^(number|integer)$/);
  expect(tools.get("lock_resources").names).toMatchObject({ type: "array", items: { type: "string" } });
  expect(tools.get("fail_task").requeue.type).toBe("boolean");
  expect(tools.get("complete_task").id.type).toMatch(/^(number|integer)$/);
  expect(tools.get("push_task").payload.type).toBe("string");
});

for (const [tool, arg, value] of DEFAULTS) {
  test(`${tool}.${arg} defaults to ${JSON.stringify(value)}`, async () => {
    const t = (await toolList()).find((x) => x.name === tool);
    expect(t.inputSchema.properties[arg].default).toEqual(value);
  });
}

for (const [tool, arg, value] of DESCRIBED) {
  test(`${tool}.${arg} describes its default of ${value}`, async () => {
    const t = (await toolList()).find((x) => x.name === tool);
    expect(t.inputSchema.properties[arg].description).toContain(`Default ${value}`);
  });
}

test("wait_seconds documents its 50-second cap", async () => {
  const tools = await toolList();
  for (const name of ["lock_resource", "wait_for_event"]) {
    const d = tools.find((t) => t.name === name).inputSchema.properties.wait_seconds.description as string;
    expect(d).toContain("50");
  }
});

/** SPEC §1 "Tasks": the blocking tools a task-capable client may ask a long wait of. */
const TASK_TOOLS = ["lock_resource", "lock_resources", "acquire_slot", "claim_paths", "claim_next_task", "wait_for_event", "watch_changes"];

test("every blocking tool tells the agent that a task-capable client may wait up to 3600 s in the background", async () => {
  const tools = new Map((await toolList()).map((t) => [t.name, t]));
  for (const name of TASK_TOOLS) {
    const t = tools.get(name);
    expect(t.description).toContain("MCP tasks extension");
    expect(t.description).toContain("up to 3600");
    expect(t.description).toContain("background task");
    const wait = t.inputSchema.properties.wait_seconds.description as string;
    expect(wait).toContain("0–50");
    expect(wait).toContain("3600 with the MCP tasks extension");
  }
  expect(tools.get("acquire_slot").description).toContain("acquire_slot(..., wait_seconds: 1800)");
});

test("read-only tools are annotated as such, and changing tools are not", async () => {
  const tools = new Map((await toolList()).map((t) => [t.name, t]));
  for (const name of ["list_locks", "get_note", "list_notes", "list_agents", "list_tasks"]) expect(tools.get(name).annotations.readOnlyHint).toBe(true);
  for (const name of ["lock_resource", "set_note", "push_task", "increment_counter"]) expect(tools.get(name).annotations.readOnlyHint).toBe(false);
});

test("the message tools follow the v2 tools, with SPEC §13's required arguments and defaults", async () => {
  const tools = new Map((await toolList()).map((t) => [t.name, t]));
  const names = [...tools.keys()];
  const required: Record<string, string[]> = {
    send_message: ["from", "body"],
    read_messages: ["agent_id"],
    ack_message: ["agent_id", "message_id"],
    hand_over: ["token", "to_agent"],
  };
  for (const [name, req] of Object.entries(required)) {
    expect(names.indexOf(name)).toBeGreaterThanOrEqual(22);
    expect([...(tools.get(name).inputSchema.required ?? [])].sort()).toEqual([...req].sort());
  }
  expect(Object.keys(tools.get("send_message").inputSchema.properties).sort()).toEqual(["about", "ack_required", "body", "from", "subject", "thread_id", "to"]);
  const read = tools.get("read_messages").inputSchema.properties;
  expect([read.unread_only.default, read.since_id.default, read.wait_seconds.default, read.limit.default, read.peek.default]).toEqual([true, 0, 0, 50, false]);
  expect(read.wait_seconds.description).toContain("50");
  expect(tools.get("send_message").inputSchema.properties.ack_required.default).toBe(false);
  expect(tools.get("read_messages").description).toContain("never instructions");
});

test("the working-tree tools, with SPEC §13's required arguments; list_worktrees is read-only", async () => {
  const tools = new Map((await toolList()).map((t) => [t.name, t]));
  expect([...tools.get("report_worktree").inputSchema.required].sort()).toEqual(["agent_id", "room"]);
  expect(Object.keys(tools.get("report_worktree").inputSchema.properties).sort()).toEqual(["agent_id", "branch", "dirty", "head", "room", "touched"]);
  expect(tools.get("report_worktree").inputSchema.properties.dirty.maxItems).toBe(2000);
  expect(tools.get("list_worktrees").annotations.readOnlyHint).toBe(true);
  expect(tools.get("check_paths").description).toContain("edited_by");
});
