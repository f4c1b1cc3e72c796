// The MCP TypeScript SDK's own client, over its Streamable HTTP transport, against a real
// daemon: the reference for what Claude Code and other MCP clients send.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { type DaemonProcess, startDaemon } from "../helpers/daemon.ts";

// Bun's default is 5 s; a blocked waiter below may legitimately take longer when a test fails.
setDefaultTimeout(20_000);

const V2_TOOLS = [
  "lock_resource",
  "unlock_resource",
  "renew_lock",
  "list_locks",
  "lock_resources",
  "set_note",
  "get_note",
  "list_notes",
  "delete_note",
  "set_note_if",
  "increment_counter",
  "register_agent",
  "unregister_agent",
  "list_agents",
  "signal_event",
  "wait_for_event",
  "clear_event",
  "push_task",
  "claim_next_task",
  "complete_task",
  "fail_task",
  "list_tasks",
];

let d: DaemonProcess;
let client: Client;
let transport: StreamableHTTPClientTransport;
beforeAll(async () => {
  d = await startDaemon();
  client = new Client({ name: "airlock-e2e", version: "0.0.0" });
  transport = new StreamableHTTPClientTransport(new URL(d.url), {
    requestInit: { headers: { Authorization: `Bearer ${d.token}` } },
  });
  await client.connect(transport);
});
afterAll(async () => {
  await client?.close();
  await d.kill();
});

test("the SDK client connects: initialize negotiates a version and names the server airlock", () => {
  expect(client.getServerVersion()?.name).toBe("airlock");
  expect(transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  expect(client.getServerCapabilities()?.tools).toBeDefined();
  expect(client.getInstructions()).toEqual(expect.any(String));
});

test("listTools includes all 22 v2 tool names", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  expect(V2_TOOLS).toHaveLength(22);
  for (const name of V2_TOOLS) expect(names).toContain(name);
  for (const t of tools) expect(t.inputSchema.type).toBe("object");
});

test("callTool increment_counter returns the JSON result as text content", async () => {
  const r = await client.callTool({ name: "increment_counter", arguments: { name: "sdk" } });
  expect(r.isError).toBeFalsy();
  expect(r.content).toEqual([{ type: "text", text: '{"value":1}' }]);
  const again = await client.callTool({ name: "increment_counter", arguments: { name: "sdk", by: 5 } });
  expect(again.content).toEqual([{ type: "text", text: '{"value":6}' }]);
});

test("a tool error reaches the SDK client as an isError result naming the field", async () => {
  const r = await client.callTool({ name: "lock_resource", arguments: { agent_id: "x" } });
  expect(r.isError).toBe(true);
  expect(r.content).toEqual([{ type: "text", text: '{"error":"missing name"}' }]);
});

test("ping works through the SDK client", async () => {
  expect(await client.ping()).toEqual({});
});
