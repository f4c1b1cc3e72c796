// The JSON-RPC envelope and the protocol methods: parse errors, id echo, notifications,
// initialize negotiation, ping, and the headers real MCP clients send.
import { describe, expect, test } from "bun:test";
import { json, makeApp } from "./rpc.ts";

const PARSE_ERROR = { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } };

async function raw(body: string, headers: Record<string, string | null> = {}) {
  const res = await (await makeApp()).send({ body, headers });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

describe("parse errors", () => {
  const bad: [string, string][] = [
    ["malformed JSON", "{"],
    ["an empty body", ""],
    ["trailing garbage", '{"jsonrpc":"2.0","id":1,"method":"ping"} x'],
    ["a batch array", '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'],
    ["an empty batch", "[]"],
    ["a string", '"ping"'],
    ["a number", "42"],
    ["null", "null"],
    ["true", "true"],
    ['jsonrpc "1.0"', '{"jsonrpc":"1.0","id":1,"method":"ping"}'],
    ["jsonrpc 2.0 as a number", '{"jsonrpc":2.0,"id":1,"method":"ping"}'],
    ["a missing jsonrpc", '{"id":1,"method":"ping"}'],
  ];
  for (const [what, body] of bad) {
    test(`${what} answers HTTP 200 with exactly the parse error`, async () => {
      const r = await raw(body);
      expect(r.status).toBe(200);
      expect(r.type).toStartWith("application/json");
      expect(JSON.parse(r.text)).toEqual(PARSE_ERROR);
      expect(r.text).toBe(JSON.stringify(PARSE_ERROR));
    });
  }
});

describe("id", () => {
  for (const id of [0, 1, -7, 1.5, 2 ** 40, "abc", "", "ünï-🔒", null]) {
    test(`echoes the id ${JSON.stringify(id)} verbatim`, async () => {
      const a = await makeApp();
      const r = await a.rpc("ping", undefined, id);
      expect(r).toEqual({ jsonrpc: "2.0", id, result: {} });
      expect(Object.is(r.id, id)).toBe(true);
    });
  }

  for (const id of ["12345678901234567890", "1.50", "1e3", "-0", "0.1000000000000000055511151231257827"]) {
    test(`echoes the numeric id ${id} byte for byte, beyond what a double keeps`, async () => {
      const res = await (await makeApp()).send({ body: `{"jsonrpc":"2.0","id":${id},"method":"ping"}` });
      expect(await res.text()).toBe(`{"jsonrpc":"2.0","id":${id},"result":{}}`);
    });
  }

  test("echoes a large id on an error answer too", async () => {
    const res = await (await makeApp()).send({ body: '{"jsonrpc":"2.0","id":98765432109876543210,"method":"nope"}' });
    expect(await res.text()).toBe('{"jsonrpc":"2.0","id":98765432109876543210,"error":{"code":-32601,"message":"method not found: nope"}}');
  });

  test("an id inside the arguments does not confuse the echo", async () => {
    const a = await makeApp();
    await a.call("push_task", { queue: "q", payload: "p" });
    const c = await a.call("claim_next_task", { queue: "q", agent_id: "w" });
    const res = await a.send({
      body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"complete_task","arguments":{"id":${c.id},"lease_token":"${c.lease_token}"}}}`,
    });
    const body = await json(res);
    expect(body.id).toBe(7);
    expect(JSON.parse(body.result.content[0].text)).toEqual({ completed: true });
  });

  test("echoes the id on an error answer too", async () => {
    const r = await (await makeApp()).rpc("no/such", undefined, "req-7");
    expect(r.id).toBe("req-7");
    expect(r.error!.code).toBe(-32601);
  });

  test("an id that is an object or an array is an invalid request, not a crash", async () => {
    for (const id of [{ a: 1 }, [1], true]) {
      const r = await raw(JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }));
      expect(r.status).toBe(200);
      const body = JSON.parse(r.text);
      expect(body.id).toBeNull();
      expect(body.error.code).toBe(-32600);
    }
  });
});

describe("methods", () => {
  test("an unknown method answers -32601 method not found: <m>", async () => {
    const r = await (await makeApp()).rpc("tools/destroy", {}, 3);
    expect(r).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32601, message: "method not found: tools/destroy" } });
  });

  // Issue 18 changed this: server/discover exists only in the 2026-07-28 era, so without the
  // _meta envelope it is that era's invalid-params error (HTTP 400), not "method not found".
  test("server/discover without _meta is a 2026-07-28 request missing its envelope (400, -32602)", async () => {
    const res = await (await makeApp()).send({ body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: {} }) });
    expect(res.status).toBe(400);
    const r = (await res.json()) as { id: unknown; error: { code: number } };
    expect(r.id).toBe(1);
    expect(r.error.code).toBe(-32602);
  });

  test("resources/list and prompts/list are not offered", async () => {
    const a = await makeApp();
    expect((await a.rpc("resources/list")).error!.code).toBe(-32601);
    expect((await a.rpc("prompts/list")).error!.code).toBe(-32601);
  });

  for (const method of ["notifications/initialized", "notifications/cancelled", "notifications/whatever"]) {
    test(`${method} without an id answers 202 with an empty body`, async () => {
      const res = await (await makeApp()).send({ body: JSON.stringify({ jsonrpc: "2.0", method, params: {} }) });
      expect(res.status).toBe(202);
      expect(await res.text()).toBe("");
    });
  }

  test("ping answers {}", async () => {
    expect(await (await makeApp()).rpc("ping")).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
  });

  test("tools/call works without initialize first", async () => {
    const a = await makeApp();
    expect(await a.call("increment_counter", { name: "first" })).toEqual({ value: 1 });
  });
});

describe("initialize", () => {
  for (const version of ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]) {
    test(`echoes the client's protocol version ${version}`, async () => {
      const r = await (await makeApp()).rpc("initialize", { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } });
      expect(r.result.protocolVersion).toBe(version);
    });
  }

  for (const [what, params] of [
    ["an unknown version", { protocolVersion: "2099-01-01" }],
    ["a version that is not a string", { protocolVersion: 20250618 }],
    ["no version", {}],
    ["no params at all", undefined],
  ] as const) {
    test(`answers the newest version (2025-11-25) for ${what}`, async () => {
      const r = await (await makeApp()).rpc("initialize", params);
      expect(r.result.protocolVersion).toBe("2025-11-25");
    });
  }

  test("names the server airlock, offers tools, and gives agents instructions", async () => {
    const r = await (await makeApp()).rpc("initialize", { protocolVersion: "2025-06-18" });
    expect(r.result.serverInfo.name).toBe("airlock");
    expect(typeof r.result.serverInfo.version).toBe("string");
    expect(r.result.serverInfo.version.length).toBeGreaterThan(0);
    expect(r.result.capabilities).toEqual({ tools: {} });
    expect(typeof r.result.instructions).toBe("string");
    expect(r.result.instructions.length).toBeGreaterThan(100);
    expect(r.result.instructions).toContain("lock_resource");
    // A task-capable client may ask for a long wait and keep working (SPEC §1 "Tasks").
    expect(r.result.instructions).toContain("MCP tasks extension");
    expect(r.result.instructions).toContain("acquire_slot(agent_id, reason, wait_seconds=1800)");
  });
});

describe("headers real clients send", () => {
  test("needs no Accept header", async () => {
    const a = await makeApp();
    const res = await a.send({ body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }), headers: { accept: null } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
  });

  test("answers JSON, never 406, to Accept: application/json, text/event-stream with Mcp-Protocol-Version", async () => {
    const a = await makeApp();
    const headers = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", "mcp-session-id": "whatever" };
    for (const method of ["initialize", "tools/list", "ping"]) {
      const res = await a.send({ body: JSON.stringify({ jsonrpc: "2.0", id: 9, method, params: { protocolVersion: "2025-06-18" } }), headers });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      const body = await json(res);
      expect(body.id).toBe(9);
      expect(body.result).toBeDefined();
    }
  });

  test("answers JSON even to Accept: text/event-stream alone", async () => {
    const res = await (await makeApp()).send({ body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }), headers: { accept: "text/event-stream" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
  });
});

describe("protocol versions and the MCP SDK", () => {
  test("the newest version we answer is the SDK's newest, and every SDK version from 2024-11-05 on is one we accept", async () => {
    const sdk = await import("@modelcontextprotocol/sdk/types.js");
    const { PROTOCOL_VERSIONS, NEWEST_PROTOCOL_VERSION } = await import("../../src/mcp/jsonrpc.ts");
    expect(NEWEST_PROTOCOL_VERSION).toBe(sdk.LATEST_PROTOCOL_VERSION);
    const modern = sdk.SUPPORTED_PROTOCOL_VERSIONS.filter((v: string) => v >= "2024-11-05");
    expect([...PROTOCOL_VERSIONS].sort() as string[]).toEqual([...modern].sort());
  });
});
