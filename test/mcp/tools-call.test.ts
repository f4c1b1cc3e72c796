// tools/call result shaping: MCP text content holding the tool's JSON, tool errors as results
// with isError, bare arrays from the list_* tools, optional keys omitted rather than null.
import { describe, expect, test } from "bun:test";
import { makeApp } from "./rpc.ts";

describe("result shaping", () => {
  test("a result is one text content holding the tool's JSON, without isError", async () => {
    const a = await makeApp();
    const r = await a.rpc("tools/call", { name: "increment_counter", arguments: { name: "n" } });
    expect(r.error).toBeUndefined();
    expect(r.result).toEqual({ content: [{ type: "text", text: '{"value":1}' }] });
  });

  test("a tool error is a result whose text is {error} with isError true", async () => {
    const a = await makeApp();
    const r = await a.rpc("tools/call", { name: "increment_counter", arguments: {} });
    expect(r.error).toBeUndefined();
    expect(r.result).toEqual({ content: [{ type: "text", text: '{"error":"missing name"}' }], isError: true });
  });

  test("an unknown tool answers {error: unknown tool: <name>}", async () => {
    const a = await makeApp();
    expect(await a.callError("drop_database", {})).toBe("unknown tool: drop_database");
    expect(await a.callError("lock_resource ", {})).toBe("unknown tool: lock_resource ");
    expect(await a.callError("LOCK_RESOURCE", {})).toBe("unknown tool: LOCK_RESOURCE");
  });

  test("a tools/call without a tool name is an unknown tool, not a crash", async () => {
    const a = await makeApp();
    const r = await a.rpc("tools/call", { arguments: {} });
    expect(r.result.isError).toBe(true);
    expect(JSON.parse(r.result.content[0].text).error).toStartWith("unknown tool:");
    const r2 = await a.rpc("tools/call", { name: 42 });
    expect(JSON.parse(r2.result.content[0].text)).toEqual({ error: "unknown tool: 42" });
  });

  test("missing arguments count as {} for tools that need none", async () => {
    const a = await makeApp();
    expect(await a.call("list_locks")).toEqual([]);
    expect(await a.call("list_notes", null)).toEqual([]);
  });

  for (const [tool, args] of [
    ["list_locks", {}],
    ["list_notes", {}],
    ["list_agents", {}],
    ["list_tasks", { queue: "q" }],
  ] as const) {
    test(`${tool} answers a bare [] when empty`, async () => {
      const r = await (await makeApp()).callRaw(tool, args);
      expect(r.content[0]!.text).toBe("[]");
    });
  }

  test("list_tasks needs its queue", async () => {
    expect(await (await makeApp()).callError("list_tasks", {})).toBe("missing queue");
  });

  test("the list_* tools answer bare arrays when full", async () => {
    const a = await makeApp();
    await a.call("lock_resource", { name: "r", agent_id: "a" });
    await a.call("set_note", { key: "k", value: "v" });
    await a.call("register_agent", { agent_id: "a" });
    await a.call("push_task", { queue: "q", payload: "p" });
    for (const [tool, args] of [["list_locks", {}], ["list_notes", {}], ["list_agents", {}], ["list_tasks", { queue: "q" }]] as const) {
      const r = await a.callRaw(tool, args);
      expect(r.content[0]!.text).toStartWith("[{");
      expect(JSON.parse(r.content[0]!.text)).toHaveLength(1);
    }
  });

  test("optional keys are omitted, never null", async () => {
    const a = await makeApp();
    await a.call("set_note", { key: "plain", value: "v" });
    await a.call("push_task", { queue: "q", payload: "p" });
    const texts = [
      (await a.callRaw("get_note", { key: "plain" })).content[0]!.text,
      (await a.callRaw("list_notes", {})).content[0]!.text,
      (await a.callRaw("list_tasks", { queue: "q" })).content[0]!.text,
      (await a.callRaw("lock_resource", { name: "r", agent_id: "a" })).content[0]!.text,
      (await a.callRaw("lock_resource", { name: "r", agent_id: "b" })).content[0]!.text,
      (await a.callRaw("claim_next_task", { queue: "empty", agent_id: "a" })).content[0]!.text,
    ];
    for (const t of texts) expect(t).not.toContain("null");
    expect(JSON.parse(texts[0]!)).toEqual({ key: "plain", value: "v" });
    expect(JSON.parse(texts[4]!)).toEqual({ locked: false, held_by: "a", expires_in_seconds: 900 });
  });

  test("arguments given as null count as not given", async () => {
    const a = await makeApp();
    const r = await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: null, wait_seconds: null, wake_token: null });
    expect(r.locked).toBe(true);
    expect(r.expires_in_seconds).toBe(900);
  });

  test("unknown extra arguments are ignored, as v2 did", async () => {
    const a = await makeApp();
    expect(await a.call("increment_counter", { name: "c", colour: "blue" })).toEqual({ value: 1 });
  });
});
