// The MCP TypeScript SDK's Client (the reference client) against the fetch handler, no port:
// it sends Accept: application/json, text/event-stream and Mcp-Protocol-Version, and must get
// plain JSON answers, a 202 for its notification and a 405 it tolerates for its SSE GET.
import { afterEach, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { makeApp, TOKEN, URL_ROOT } from "./rpc.ts";

let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

async function connect() {
  const a = await makeApp();
  const seen: { method: string; status: number; accept: string | null; version: string | null }[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(URL_ROOT), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    fetch: async (url, init) => {
      const req = new Request(String(url), init);
      req.headers.set("host", new URL(String(url)).host);
      const res = await a.app.fetch(req);
      seen.push({ method: req.method, status: res.status, accept: req.headers.get("accept"), version: req.headers.get("mcp-protocol-version") });
      return res;
    },
  });
  client = new Client({ name: "airlock-test", version: "0.0.0" });
  await client.connect(transport);
  return { a, client, seen };
}

test("the SDK client connects, negotiating the SDK's newest protocol version", async () => {
  const { client, seen } = await connect();
  expect(client.getServerVersion()?.name).toBe("airlock");
  expect(client.getInstructions()).toContain("lock_resource");
  expect(seen[0]).toMatchObject({ method: "POST", status: 200 });
  expect(seen[0]!.accept).toContain("text/event-stream");
  expect(seen.find((s) => s.status === 202)).toBeDefined();
  expect(seen.some((s) => s.status >= 500)).toBe(false);
  expect(await client.ping()).toEqual({});
  // After initialize the client sends the version it negotiated on every request.
  expect(seen.at(-1)!.version).toBe(LATEST_PROTOCOL_VERSION);
});

test("the SDK client lists the tools and calls one", async () => {
  const { client, a } = await connect();
  const { tools } = await client.listTools();
  expect(tools.slice(0, 3).map((t) => t.name)).toEqual(["lock_resource", "unlock_resource", "renew_lock"]);
  const r = await client.callTool({ name: "lock_resource", arguments: { name: "sdk", agent_id: "agent:sdk" } });
  expect(r.isError).toBeUndefined();
  const content = r.content as { type: string; text: string }[];
  expect(JSON.parse(content[0]!.text)).toMatchObject({ locked: true, expires_in_seconds: 900 });
  expect((await a.kernel.locks.list()).map((l) => l.agent_id)).toEqual(["agent:sdk"]);
});

test("the SDK client sees a tool error as isError with the {error} text", async () => {
  const { client } = await connect();
  const r = await client.callTool({ name: "lock_resource", arguments: { name: "x" } });
  expect(r.isError).toBe(true);
  expect((r.content as { text: string }[])[0]!.text).toBe('{"error":"missing agent_id"}');
});
