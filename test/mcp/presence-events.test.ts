// Presence (register_agent, unregister_agent, list_agents) and events (signal_event,
// wait_for_event, clear_event) over the wire.
import { describe, expect, test } from "bun:test";
import { isSettled, makeApp, until } from "./rpc.ts";

describe("register_agent", () => {
  test("answers registered:true with a 60-second default heartbeat", async () => {
    const a = await makeApp();
    expect(await a.call("register_agent", { agent_id: "a" })).toEqual({ registered: true, expires_in_seconds: 60 });
  });

  test("ttl_seconds, ttl_minutes and truncation apply", async () => {
    const a = await makeApp();
    expect(await a.call("register_agent", { agent_id: "a", ttl_seconds: 20.7 })).toEqual({ registered: true, expires_in_seconds: 20 });
    expect(await a.call("register_agent", { agent_id: "b", ttl_minutes: 2 })).toEqual({ registered: true, expires_in_seconds: 120 });
    expect(await a.call("register_agent", { agent_id: "c", ttl_minutes: 2, ttl_seconds: 5 })).toEqual({ registered: true, expires_in_seconds: 5 });
  });

  test("ttl_seconds <= 0 is refused and the agent is not listed", async () => {
    const a = await makeApp();
    expect(await a.callError("register_agent", { agent_id: "a", ttl_seconds: 0 })).toBe("store: ttlSeconds must be > 0");
    expect(await a.callError("register_agent", { agent_id: "a", ttl_seconds: -1 })).toBe("store: ttlSeconds must be > 0");
    expect(await a.call("list_agents")).toEqual([]);
  });

  test("calling again is the heartbeat: it pushes the expiry out", async () => {
    const a = await makeApp();
    await a.call("register_agent", { agent_id: "a", ttl_seconds: 10 });
    a.clock.advance(8_000);
    await a.call("register_agent", { agent_id: "a", ttl_seconds: 10 });
    a.clock.advance(8_000);
    expect((await a.call("list_agents")).map((x: any) => [x.agent_id, x.expires_in_seconds])).toEqual([["a", 2]]);
  });

  test("missing agent_id is an error", async () => {
    const a = await makeApp();
    expect(await a.callError("register_agent", {})).toBe("missing agent_id");
    expect(await a.callError("register_agent", { agent_id: "" })).toBe("missing agent_id");
    expect(await a.callError("register_agent", { agent_id: null })).toBe("missing agent_id");
  });
});

describe("list_agents", () => {
  test("lists live agents by id with agent_id and expires_in_seconds", async () => {
    const a = await makeApp();
    await a.call("register_agent", { agent_id: "zed", ttl_seconds: 30 });
    await a.call("register_agent", { agent_id: "amy", ttl_seconds: 10 });
    const list = await a.call("list_agents");
    expect(list.map((x: any) => x.agent_id)).toEqual(["amy", "zed"]);
    expect(list[0]).toMatchObject({ agent_id: "amy", expires_in_seconds: 10 });
    for (const x of list) expect(JSON.stringify(x)).not.toContain("null");
  });

  test("an agent whose heartbeat lapsed is gone, and its locks are released at that moment", async () => {
    const a = await makeApp();
    await a.call("register_agent", { agent_id: "a", ttl_seconds: 10 });
    await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 900 });
    a.clock.advance(10_000);
    expect(await a.call("list_agents")).toEqual([]);
    expect(await a.call("list_locks")).toEqual([]);
  });
});

describe("unregister_agent", () => {
  test("answers unregistered:true and releases the agent's locks", async () => {
    const a = await makeApp();
    await a.call("register_agent", { agent_id: "a" });
    await a.call("lock_resource", { name: "r", agent_id: "a" });
    await a.call("lock_resource", { name: "s", agent_id: "b" });
    expect(await a.call("unregister_agent", { agent_id: "a" })).toEqual({ unregistered: true });
    expect(await a.call("list_agents")).toEqual([]);
    expect((await a.call("list_locks")).map((l: any) => l.name)).toEqual(["s"]);
  });

  test("unregistering an unknown agent still answers unregistered:true", async () => {
    expect(await (await makeApp()).call("unregister_agent", { agent_id: "ghost" })).toEqual({ unregistered: true });
  });

  test("missing agent_id is an error", async () => {
    expect(await (await makeApp()).callError("unregister_agent", {})).toBe("missing agent_id");
  });
});

describe("events", () => {
  test("signal_event counts generations from 1", async () => {
    const a = await makeApp();
    expect(await a.call("signal_event", { name: "e" })).toEqual({ generation: 1 });
    expect(await a.call("signal_event", { name: "e" })).toEqual({ generation: 2 });
    expect(await a.call("signal_event", { name: "other" })).toEqual({ generation: 1 });
  });

  test("wait_for_event fires at once when the generation is past last_seen_generation", async () => {
    const a = await makeApp();
    await a.call("signal_event", { name: "e" });
    expect(await a.call("wait_for_event", { name: "e" })).toEqual({ generation: 1, fired: true });
    expect(await a.call("wait_for_event", { name: "e", last_seen_generation: 0, wait_seconds: 0 })).toEqual({ generation: 1, fired: true });
  });

  test("wait_for_event with wait_seconds 0 answers at once without firing", async () => {
    const a = await makeApp();
    await a.call("signal_event", { name: "e" });
    expect(await a.call("wait_for_event", { name: "e", last_seen_generation: 1, wait_seconds: 0 })).toEqual({ generation: 1, fired: false });
    expect(await a.call("wait_for_event", { name: "never", wait_seconds: 0 })).toEqual({ generation: 0, fired: false });
  });

  test("wait_for_event blocks 25 seconds by default", async () => {
    const a = await makeApp();
    const p = a.call("wait_for_event", { name: "e" });
    await until(() => a.kernel.events.waits.size === 1, "the wait");
    a.clock.advance(24_999);
    expect(await isSettled(p)).toBe(false);
    a.clock.advance(1);
    expect(await p).toEqual({ generation: 0, fired: false });
  });

  test("wait_for_event clamps wait_seconds 500 to 50", async () => {
    const a = await makeApp();
    const p = a.call("wait_for_event", { name: "e", wait_seconds: 500 });
    await until(() => a.kernel.events.waits.size === 1, "the wait");
    a.clock.advance(49_999);
    expect(await isSettled(p)).toBe(false);
    a.clock.advance(1);
    expect(await p).toEqual({ generation: 0, fired: false });
  });

  test("a blocked wait_for_event wakes on signal_event", async () => {
    const a = await makeApp();
    const p = a.call("wait_for_event", { name: "e", wait_seconds: 30 });
    await until(() => a.kernel.events.waits.size === 1, "the wait");
    await a.call("signal_event", { name: "e" });
    expect(await p).toEqual({ generation: 1, fired: true });
  });

  test("clear_event answers cleared:true, resets to 0 and wakes waiters without firing", async () => {
    const a = await makeApp();
    await a.call("signal_event", { name: "e" });
    await a.call("signal_event", { name: "e" });
    const p = a.call("wait_for_event", { name: "e", last_seen_generation: 2, wait_seconds: 30 });
    await until(() => a.kernel.events.waits.size === 1, "the wait");
    expect(await a.call("clear_event", { name: "e" })).toEqual({ cleared: true });
    expect(await p).toEqual({ generation: 0, fired: false });
    expect(await a.call("signal_event", { name: "e" })).toEqual({ generation: 1 });
  });

  test("missing names and wrong types are named", async () => {
    const a = await makeApp();
    expect(await a.callError("signal_event", {})).toBe("missing name");
    expect(await a.callError("clear_event", { name: "" })).toBe("missing name");
    expect(await a.callError("wait_for_event", { name: null })).toBe("missing name");
    expect(await a.callError("wait_for_event", { name: "e", last_seen_generation: "1" })).toBe('last_seen_generation must be a number (got "1")');
    expect(await a.callError("wait_for_event", { name: "e", wait_seconds: "5" })).toBe('wait_seconds must be a number (got "5")');
    expect(await a.callError("signal_event", { name: 7 })).toBe("name must be a string (got 7)");
    expect(await a.call("wait_for_event", { name: "e", wait_seconds: 0 })).toEqual({ generation: 0, fired: false });
  });
});
