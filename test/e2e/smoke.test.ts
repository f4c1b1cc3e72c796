import { expect, test } from "bun:test";
import { useDaemon } from "../helpers/daemon.ts";

const d = useDaemon();

test("a started daemon answers healthz and a tool call with its generated token", async () => {
  const h = await fetch(`${d.url}/healthz`);
  expect(h.status).toBe(200);
  expect(await h.text()).toBe("ok");
  expect(d.token).toMatch(/^[0-9a-f]{64}$/);
  expect(await d.call("increment_counter", { name: "smoke" })).toEqual({ value: 1 });
});

test("airlock/memory answers the daemon's heap and RSS after a collection, the same twice at rest", async () => {
  for (let i = 0; i < 500; i++) await d.call("set_note", { key: `memory:${i % 50}`, value: "x".repeat(1024) });
  const a = (await d.rpc("airlock/memory")).result;
  expect(a.heap_bytes).toBeGreaterThan(0);
  expect(a.objects).toBeGreaterThan(0);
  expect(a.rss_bytes).toBeGreaterThan(a.heap_bytes);
  // After a full collection the garbage of those calls is gone: what the soak's leak check relies on.
  const b = (await d.rpc("airlock/memory")).result;
  expect(Math.abs(b.heap_bytes - a.heap_bytes)).toBeLessThan(1024 * 1024);
  // Without the token it is refused like every call.
  const res = await fetch(`${d.url}/`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "airlock/memory" }) });
  expect(res.status).toBe(401);
});
