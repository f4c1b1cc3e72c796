// The 2026-07-28 era through the exported fetch handler: one raw request for every error code
// and header rule, server/discover, resultType, the cache hints, the eras in airlock/status, and
// the subscriptions/listen stream (acknowledgement first, tagging, filtering, a real change
// pushed, cleanup on close). The 2025 era's own tests (jsonrpc, tools-call...) stay as they were.
import { describe, expect, test } from "bun:test";
import { type App, createApp } from "../../src/mcp/server.ts";
import { TOOL_LIST } from "../../src/mcp/tools/index.ts";
import { GOOD_HEADERS, json, makeApp, TOKEN, type TestApp, until, URL_ROOT } from "./rpc.ts";

const V = "2026-07-28";
const META = { "io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": {} };
const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";
const SUB_ID = "io.modelcontextprotocol/subscriptionId";
const TASKS = "io.modelcontextprotocol/tasks";

/** The headers a modern client sends for this body (each can be overridden or left out with null). */
function routing(method: string, params: Record<string, unknown>): Record<string, string> {
  const h: Record<string, string> = { "mcp-protocol-version": V, "mcp-method": method };
  if (method === "tools/call") h["mcp-name"] = String(params.name);
  return h;
}

async function modern(a: TestApp, method: string, params: Record<string, unknown> = {}, o: { id?: unknown; headers?: Record<string, string | null>; meta?: unknown } = {}) {
  const p = { ...params, _meta: o.meta === undefined ? META : o.meta };
  if (o.meta === null) delete (p as Record<string, unknown>)._meta;
  const res = await a.send({ body: JSON.stringify({ jsonrpc: "2.0", id: o.id ?? 7, method, params: p }), headers: { ...routing(method, params), ...o.headers } });
  return { status: res.status, type: res.headers.get("content-type"), body: (await res.json()) as any };
}

describe("the envelope", () => {
  test("a request without _meta on a modern-only method is 400 with -32602 and its id", async () => {
    const a = await makeApp();
    const r = await modern(a, "server/discover", {}, { meta: null, id: "d1" });
    expect(r.status).toBe(400);
    expect(r.body.id).toBe("d1");
    expect(r.body.error.code).toBe(-32602);
  });

  test("_meta without clientCapabilities is 400 with -32602", async () => {
    const a = await makeApp();
    const r = await modern(a, "tools/list", {}, { meta: { "io.modelcontextprotocol/protocolVersion": V } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe(-32602);
    expect(r.body.error.message).toContain("clientCapabilities");
  });

  test("clientInfo is optional", async () => {
    const a = await makeApp();
    expect((await modern(a, "server/discover")).status).toBe(200);
  });

  test("an unsupported version is 400 with -32022, the supported versions and the requested one", async () => {
    const a = await makeApp();
    const r = await modern(a, "tools/list", {}, { meta: { ...META, "io.modelcontextprotocol/protocolVersion": "2099-01-01" }, headers: { "mcp-protocol-version": "2099-01-01" }, id: 11 });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ jsonrpc: "2.0", id: 11, error: { code: -32022, message: expect.any(String), data: { supported: [V], requested: "2099-01-01" } } });
  });
});

describe("the routing headers", () => {
  const cases: [string, string, Record<string, unknown>, Record<string, string | null>][] = [
    ["a missing MCP-Protocol-Version", "tools/list", {}, { "mcp-protocol-version": null }],
    ["an MCP-Protocol-Version unlike _meta", "tools/list", {}, { "mcp-protocol-version": "2025-11-25" }],
    ["a missing Mcp-Method", "tools/list", {}, { "mcp-method": null }],
    ["an Mcp-Method unlike the body", "tools/list", {}, { "mcp-method": "prompts/list" }],
    ["an Mcp-Method in other case (values are case-sensitive)", "tools/list", {}, { "mcp-method": "TOOLS/LIST" }],
    ["a missing Mcp-Name on tools/call", "tools/call", { name: "list_locks", arguments: {} }, { "mcp-name": null }],
    ["an Mcp-Name unlike the tool", "tools/call", { name: "list_locks", arguments: {} }, { "mcp-name": "list_notes" }],
    ["an Mcp-Name in bad base64", "tools/call", { name: "list_locks", arguments: {} }, { "mcp-name": "=?base64?!!!?=" }],
  ];
  for (const [what, method, params, headers] of cases) {
    test(`${what} is 400 with -32020`, async () => {
      const a = await makeApp();
      const r = await modern(a, method, params, { headers, id: 5 });
      expect(r.status).toBe(400);
      expect(r.body.id).toBe(5);
      expect(r.body.error.code).toBe(-32020);
    });
  }

  test("header names are case-insensitive, surrounding whitespace is trimmed, =?base64?…?= is decoded", async () => {
    const a = await makeApp();
    const params = { name: "list_locks", arguments: {} };
    expect((await modern(a, "tools/call", params, { headers: { "mcp-name": null, "MCP-NAME": "  list_locks  " } })).status).toBe(200);
    const b64 = `=?base64?${Buffer.from("list_locks").toString("base64")}?=`;
    expect((await modern(a, "tools/call", params, { headers: { "mcp-name": b64 } })).status).toBe(200);
  });

  test("a stray Mcp-Session-Id is ignored", async () => {
    const a = await makeApp();
    expect((await modern(a, "tools/list", {}, { headers: { "mcp-session-id": "abc" } })).status).toBe(200);
  });

  test("GET and DELETE on / stay 405", async () => {
    const a = await makeApp();
    expect((await a.send({ method: "GET", body: null })).status).toBe(405);
    expect((await a.send({ method: "DELETE", body: null })).status).toBe(405);
  });
});

describe("methods", () => {
  test("server/discover answers both eras' versions, tools and the tasks extension, with cache hints", async () => {
    const a = await makeApp();
    const r = await modern(a, "server/discover", {}, { id: 1 });
    expect(r.status).toBe(200);
    const res = r.body.result;
    expect(res.resultType).toBe("complete");
    expect(res.supportedVersions).toEqual([V, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]);
    expect(res.capabilities).toEqual({ tools: {}, extensions: { [TASKS]: {} } });
    expect(res.serverInfo.name).toBe("airlock");
    expect(res._meta[SERVER_INFO_KEY]).toEqual(res.serverInfo);
    expect(res.instructions).toContain("Airlock");
    expect(Number.isInteger(res.ttlMs) && res.ttlMs > 0).toBe(true);
    expect(res.cacheScope).toBe("public");
  });

  test("tools/list carries ttlMs, cacheScope and the tools in the same order every time", async () => {
    const a = await makeApp();
    const one = (await modern(a, "tools/list")).body.result;
    const two = (await modern(a, "tools/list")).body.result;
    expect(one.resultType).toBe("complete");
    expect(one.cacheScope).toBe("public");
    expect(one.ttlMs).toBeGreaterThan(0);
    expect(one.tools.map((t: any) => t.name)).toEqual(TOOL_LIST.map((t) => t.name));
    expect(two.tools.map((t: any) => t.name)).toEqual(one.tools.map((t: any) => t.name));
  });

  test("tools/call answers the ordinary result with resultType complete and the serverInfo _meta", async () => {
    const a = await makeApp();
    const r = await modern(a, "tools/call", { name: "increment_counter", arguments: { name: "n" } });
    expect(r.status).toBe(200);
    expect(r.type).toStartWith("application/json");
    expect(r.body.result.content).toEqual([{ type: "text", text: '{"value":1}' }]);
    expect(r.body.result.resultType).toBe("complete");
    expect(r.body.result._meta[SERVER_INFO_KEY].name).toBe("airlock");
    // a tool-level error stays a result
    const e = await modern(a, "tools/call", { name: "increment_counter", arguments: {} });
    expect(e.body.result.isError).toBe(true);
    expect(e.body.result.resultType).toBe("complete");
  });

  test("an unknown tool is a protocol error -32602 in this era", async () => {
    const a = await makeApp();
    const r = await modern(a, "tools/call", { name: "drop_database", arguments: {} }, { id: 9 });
    expect(r.body).toEqual({ jsonrpc: "2.0", id: 9, error: { code: -32602, message: "unknown tool: drop_database" } });
  });

  for (const method of ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "prompts/list", "no/such"]) {
    test(`${method} does not exist in this era: 404 with -32601 and the id`, async () => {
      const a = await makeApp();
      const r = await modern(a, method, {}, { id: "m" });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ jsonrpc: "2.0", id: "m", error: { code: -32601, message: `method not found: ${method}` } });
    });
  }

  test("our airlock/* methods work in both eras; airlock/status counts the requests of each", async () => {
    const a = await makeApp();
    await a.rpc("tools/list");
    const modernStatus = await modern(a, "airlock/status");
    expect(modernStatus.status).toBe(200);
    expect(modernStatus.body.result.resultType).toBe("complete");
    expect(modernStatus.body.result.eras).toEqual({ "2025": 1, [V]: 1 });
    const legacy = await a.rpc("airlock/status");
    expect(legacy.result.eras).toEqual({ "2025": 2, [V]: 1 });
    expect(legacy.result.resultType).toBeUndefined();
    expect((await modern(a, "airlock/identity")).body.result.pid).toBe(process.pid);
  });

  test("airlock/status counts each era per User-Agent, in a bounded table", async () => {
    const a = await makeApp();
    await modern(a, "tools/list", {}, { headers: { "user-agent": "claude-code/2.1.332 (cli)" } });
    await a.send({ body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), headers: { "user-agent": "airlock/0.1.0 (cli)" } });
    await a.send({ body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), headers: { "user-agent": null } });
    // A caller that varies its User-Agent fills the table only up to its bound; the rest is "(other)".
    for (let i = 0; i < 50; i++) await a.send({ body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }), headers: { "user-agent": `x${i}` } });
    const byClient = (await a.rpc("airlock/status")).result.eras_by_client;
    expect(byClient["claude-code/2.1.332 (cli)"]).toEqual({ "2025": 0, [V]: 1 });
    expect(byClient["airlock/0.1.0 (cli)"]).toEqual({ "2025": 1, [V]: 0 });
    expect(Object.keys(byClient).length).toBe(32);
    expect(byClient["(other)"]["2025"]).toBeGreaterThan(0);
    const counted = Object.values(byClient as Record<string, Record<string, number>>).reduce((n, c) => n + c["2025"]! + c[V]!, 0);
    expect(counted).toBe(1 + 1 + 1 + 50 + 1); // the status read itself is counted before it answers
  });

  test("a request rejected by the envelope is not counted as served", async () => {
    const a = await makeApp();
    await modern(a, "tools/list", {}, { headers: { "mcp-method": null } });
    expect((await a.rpc("airlock/status")).result.eras).toEqual({ "2025": 1, [V]: 0 });
  });

  test("a blocked modern tools/call whose client leaves is detached, as in the 2025 era", async () => {
    const a = await makeApp();
    const held = await a.call("lock_resource", { name: "r", agent_id: "a" });
    const ac = new AbortController();
    const params = { name: "lock_resource", arguments: { name: "r", agent_id: "gone", wait_seconds: 30 }, _meta: META };
    const p = a.send({ body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params }), headers: routing("tools/call", params), signal: ac.signal });
    await until(() => a.kernel.locks.waits.size === 1, "the call to wait");
    ac.abort();
    await until(async () => (await a.kernel.locks.list())[0]?.waiters[0]?.attached === false, "the waiter to detach");
    await p.catch(() => undefined);
    await a.call("unlock_resource", { name: "r", lock_token: held.lock_token });
    expect(await a.call("list_locks")).toEqual([]);
  });
});

/** Reads SSE events off a listen stream, one JSON message per `data:` line. */
function reader(res: Response) {
  const r = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = "";
  return {
    async next(): Promise<any> {
      for (;;) {
        const cut = buf.indexOf("\n\n");
        if (cut >= 0) {
          const event = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const data = event.split("\n").find((l) => l.startsWith("data: "));
          if (data) return JSON.parse(data.slice(6));
          continue;
        }
        const { value, done } = await r.read();
        if (done) throw new Error("the stream ended");
        buf += dec.decode(value, { stream: true });
      }
    },
    cancel: () => r.cancel(),
  };
}

function listen(a: { app: App }, notifications: unknown, meta: unknown = META, signal?: AbortSignal) {
  const params = { notifications, _meta: meta };
  const headers: Record<string, string> = { ...GOOD_HEADERS, ...routing("subscriptions/listen", params) };
  const init: RequestInit = { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: "sub-1", method: "subscriptions/listen", params }) };
  if (signal) init.signal = signal;
  return a.app.fetch(new Request(URL_ROOT, init));
}

describe("subscriptions/listen", () => {
  test("acknowledges first, tags every event with the listen id, and pushes a real change", async () => {
    const a = await makeApp();
    const res = await listen(a, { airlockChanges: { kinds: ["note."] }, toolsListChanged: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const s = reader(res);
    const ack = await s.next();
    expect(ack).toEqual({ jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged", params: { notifications: { airlockChanges: { kinds: ["note."] } }, _meta: { [SUB_ID]: "sub-1" } } });
    await a.call("increment_counter", { name: "not-a-note" }); // filtered out by kinds
    await a.call("set_note", { key: "k", value: "v" });
    const ev = await s.next();
    expect(ev.method).toBe("notifications/airlock/changes");
    expect(ev.params._meta).toEqual({ [SUB_ID]: "sub-1" });
    expect(ev.params.changes.map((c: any) => [c.kind, c.resource])).toEqual([["note.set", "k"]]);
    expect(ev.params.revision).toBe(ev.params.changes[0].revision);
    await s.cancel();
  });

  test("a call task's status is pushed; closing the stream ends the subscription: its journal wait and status listener are gone", async () => {
    const a = await makeApp();
    const ext = { ...META, "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } } };
    const ac = new AbortController();
    const res = await listen(a, { airlockChanges: true, tasksStatus: true }, ext, ac.signal);
    const s = reader(res);
    expect((await s.next()).params.notifications).toEqual({ airlockChanges: true, tasksStatus: true });
    await until(() => a.kernel.journal.waits.line("journal").length === 1 && a.kernel.callTasks.listening === 1, "the journal wait and the status listener");
    // A real call task: B waits 600 s for A's lock as a task, and is granted when A unlocks.
    const held = await a.call("lock_resource", { name: "r", agent_id: "A" });
    const callParams = { name: "lock_resource", arguments: { name: "r", agent_id: "B", wait_seconds: 600 }, _meta: ext };
    const created = await json(await a.send({ body: JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/call", params: callParams }), headers: routing("tools/call", callParams) }));
    expect(created.result).toMatchObject({ resultType: "task", status: "working" });
    await a.call("unlock_resource", { name: "r", lock_token: held.lock_token });
    let status: any;
    while (status?.params?.status !== "completed") {
      status = await s.next();
      if (status.method === "notifications/tasks/status") expect(status.params).toMatchObject({ taskId: created.result.taskId, _meta: { [SUB_ID]: "sub-1" } });
    }
    ac.abort();
    await s.cancel().catch(() => undefined);
    await until(() => a.kernel.journal.waits.line("journal").length === 0 && a.kernel.callTasks.listening === 0, "the subscription to end");
  });

  test("only the types asked for are sent: a stream without airlockChanges gets no change", async () => {
    const a = await makeApp();
    const res = await listen(a, { promptsListChanged: true });
    const s = reader(res);
    expect((await s.next()).params.notifications).toEqual({});
    // No change feed was opened for it: nothing waits on the journal, so no change can be sent.
    await a.call("set_note", { key: "k", value: "v" });
    expect(a.kernel.journal.waits.line("journal").length).toBe(0);
    await s.cancel();
  });

  test("when the daemon stops, an open stream is sent the listen request's result and ends", async () => {
    const a = await makeApp();
    const app = createApp({ kernel: a.kernel, token: TOKEN });
    const s = reader(await listen({ app }, { airlockChanges: true }));
    expect((await s.next()).method).toBe("notifications/subscriptions/acknowledged");
    await until(() => a.kernel.journal.waits.line("journal").length === 1, "the journal wait");
    app.close();
    expect(await s.next()).toEqual({ jsonrpc: "2.0", id: "sub-1", result: { _meta: { [SUB_ID]: "sub-1" } } });
    await expect(s.next()).rejects.toThrow("the stream ended");
    await until(() => a.kernel.journal.waits.line("journal").length === 0, "the journal wait to go");
  });

  test("tasksStatus without the tasks extension declared is 400 with -32021 and requiredCapabilities", async () => {
    const a = await makeApp();
    const res = await listen(a, { tasksStatus: true });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.id).toBe("sub-1");
    expect(body.error.code).toBe(-32021);
    expect(body.error.data).toEqual({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
  });

  test("a listen without notifications is 400 with -32602", async () => {
    const a = await makeApp();
    const res = await listen(a, undefined);
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe(-32602);
  });
});
