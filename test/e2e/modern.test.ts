// Both eras on one real daemon over real HTTP: a 2026-07-28 request and a v2 curl recipe side by
// side, and a subscriptions/listen stream that is pushed a change another client makes and ends
// when its client hangs up.
import { expect, test } from "bun:test";
import { useDaemon } from "../helpers/daemon.ts";
import { until } from "../helpers/until.ts";

const d = useDaemon();
const V = "2026-07-28";
const META = { "io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": { name: "e2e", version: "0" } };

function modernPost(method: string, params: Record<string, unknown>, id: unknown, signal?: AbortSignal) {
  const headers: Record<string, string> = { "MCP-Protocol-Version": V, "Mcp-Method": method, accept: "application/json, text/event-stream" };
  if (method === "tools/call") headers["Mcp-Name"] = String(params.name);
  return d.post(JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: META } }), headers, signal ? { signal } : {});
}

test("a modern tools/call and a v2 curl recipe are served side by side, each in its own shape", async () => {
  const m = await modernPost("tools/call", { name: "increment_counter", arguments: { name: "both" } }, 1);
  expect(m.status).toBe(200);
  const mb = (await m.json()) as any;
  expect(mb.result.resultType).toBe("complete");
  expect(JSON.parse(mb.result.content[0].text)).toEqual({ value: 1 });
  // The README recipe: no Accept, no initialize, no _meta; the answer has no resultType.
  const legacy = await d.post('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"increment_counter","arguments":{"name":"both"}}}');
  expect(await legacy.text()).toBe('{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\\"value\\":2}"}]}}');
  const discover = await modernPost("server/discover", {}, 3);
  expect(((await discover.json()) as any).result.supportedVersions[0]).toBe(V);
});

test("a listen stream is pushed a change another client makes, and ends when its client hangs up", async () => {
  const ac = new AbortController();
  const res = await modernPost("subscriptions/listen", { notifications: { airlockChanges: { kinds: ["lock."] } } }, "listen-1", ac.signal);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = "";
  const next = async (): Promise<any> => {
    for (;;) {
      const m = /^data: (.*)$/m.exec(buf);
      if (m && buf.includes("\n\n", m.index)) {
        buf = buf.slice(buf.indexOf("\n\n", m.index) + 2);
        return JSON.parse(m[1]!);
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("the stream ended");
      buf += dec.decode(value, { stream: true });
    }
  };
  expect((await next()).method).toBe("notifications/subscriptions/acknowledged");
  const lock = await d.call("lock_resource", { name: "pushed", agent_id: "other" });
  const ev = await next();
  expect(ev.method).toBe("notifications/airlock/changes");
  expect(ev.params._meta["io.modelcontextprotocol/subscriptionId"]).toBe("listen-1");
  expect(ev.params.changes[0]).toMatchObject({ kind: "lock.granted", resource: "pushed", agent_id: "other" });
  ac.abort();
  await reader.cancel().catch(() => undefined);
  await d.call("unlock_resource", { name: "pushed", lock_token: lock.lock_token });
  // The daemon goes on serving both eras after the stream is gone.
  expect((await d.rpc("airlock/status")).result.eras).toEqual({ "2025": 4, [V]: 3 }); // this file: call, discover, listen; the recipe, lock, unlock, this read
});

test("closing a blocked modern tools/call's response cancels the call: its waiter is detached and gets no grant", async () => {
  const held = await d.call("lock_resource", { name: "hung-up", agent_id: "holder" });
  const ac = new AbortController();
  const blocked = modernPost("tools/call", { name: "lock_resource", arguments: { name: "hung-up", agent_id: "leaver", wait_seconds: 30 } }, 9, ac.signal).catch(() => "closed");
  const waiters = async () => ((await d.call("list_locks")) as any[]).find((l) => l.name === "hung-up")?.waiters ?? [];
  await until("the modern call to block", async () => (await waiters())[0]?.blocked === true);
  ac.abort();
  expect(await blocked).toBe("closed");
  // Detached at once (it keeps its place with a wake_token, like a 2025 call whose client left)...
  await until("the waiter to be detached", async () => (await waiters())[0]?.blocked === false);
  // ...so the release passes it over: the lock is free, not handed to a caller that is gone.
  await d.call("unlock_resource", { name: "hung-up", lock_token: held.lock_token });
  const next = await d.call("lock_resource", { name: "hung-up", agent_id: "third" });
  expect(next.locked).toBe(true);
  const feed = await d.call("watch_changes", { since_revision: 0, kinds: ["lock."], limit: 500 });
  const grants = feed.changes.filter((c: any) => c.resource === "hung-up" && c.kind === "lock.granted").map((c: any) => c.agent_id);
  expect(grants).toEqual(["holder", "third"]);
});
